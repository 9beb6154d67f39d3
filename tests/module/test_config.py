"""Config: dataclass with builders, JSON round trip, tagged enums, validation at init."""

from __future__ import annotations

import json
import math

import pytest

from minidl.dispatch import Device
from minidl.module import Config, ConfigEnum, Initializer, config
from minidl.nn import (
    BatchNormConfig,
    Conv1dConfig,
    Conv2dConfig,
    DropoutConfig,
    EmbeddingConfig,
    LayerNormConfig,
    LinearConfig,
    LinearLayout,
    PaddingConfig2d,
)


@config
class _Inner:
    width: int
    scale: float = 2.0


@config
class _Outer:
    name: str
    inner: _Inner
    sizes: tuple[int, int] = (3, 3)
    maybe: _Inner | None = None
    init: Initializer = Initializer.Zeros


def test_required_fields_are_positional_and_defaults_fill_the_rest():
    cfg = LinearConfig(4, 2)
    assert (cfg.d_input, cfg.d_output, cfg.bias, cfg.layout) == (4, 2, True, LinearLayout.Row)
    assert cfg.initializer == Initializer.KaimingUniform(gain=1 / math.sqrt(3), fan_out_only=False)
    with pytest.raises(TypeError):
        LinearConfig(4)  # d_output is required


def test_with_builders_return_a_new_config_and_leave_the_old_one():
    cfg = LinearConfig(4, 2)
    other = cfg.with_bias(False).with_layout(LinearLayout.Col)
    assert (other.bias, other.layout) == (False, LinearLayout.Col)
    assert (cfg.bias, cfg.layout) == (True, LinearLayout.Row)
    with pytest.raises(AttributeError):
        cfg.bias = False  # configs are values


def test_str_prints_json_with_the_initializer_tagged():
    data = json.loads(str(LinearConfig(256, 64)))
    assert data["initializer"] == {"KaimingUniform": {"gain": pytest.approx(1 / math.sqrt(3)), "fan_out_only": False}}
    assert data["layout"] == "Row"
    assert json.loads(repr(LinearConfig(256, 64))) == data


@pytest.mark.parametrize("cfg", [
    LinearConfig(3, 5).with_initializer(Initializer.XavierNormal(gain=2.0)).with_layout(LinearLayout.Col),
    Conv2dConfig((3, 8), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 2, 3, 4)).with_groups(1),
    Conv2dConfig((2, 4), (5, 5)).with_padding(PaddingConfig2d.Same).with_initializer(Initializer.Constant(0.25)),
    Conv1dConfig(2, 4, 3),
    BatchNormConfig(7).with_momentum(0.2),
    LayerNormConfig(16, epsilon=1e-6),
    DropoutConfig(0.25),
    EmbeddingConfig(10, 4),
    _Outer("x", _Inner(3), maybe=_Inner(5, 0.5), init=Initializer.Uniform(-1.0, 2.0)),
    _Outer("y", _Inner(1)),
], ids=lambda c: type(c).__name__)
def test_json_round_trip_gives_an_equal_config(cfg, tmp_path):
    assert type(cfg).from_json(cfg.to_json()) == cfg
    path = tmp_path / "config.json"
    cfg.save(path)
    loaded = type(cfg).load(path)
    assert loaded == cfg and type(loaded) is type(cfg)


def test_tuple_fields_accept_lists_like_burns_arrays():
    assert Conv2dConfig([3, 8], [3, 3]) == Conv2dConfig((3, 8), (3, 3))
    assert Conv2dConfig([3, 8], [3, 3]).kernel_size == (3, 3)


def test_tuple_variant_serializes_as_a_json_array():
    data = json.loads(Conv2dConfig((3, 8), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1, 2, 2)).to_json())
    assert data["padding"] == {"Explicit": [1, 1, 2, 2]}


def test_unit_variants_are_values_and_calling_them_returns_the_same_value():
    assert LinearLayout.Col() is LinearLayout.Col
    assert LinearLayout.Col != LinearLayout.Row
    assert isinstance(Initializer.Ones, Initializer)
    assert Initializer.Ones.variant == "Ones"


def test_decoding_rejects_unknown_variants_and_fields():
    with pytest.raises(ValueError, match="unknown variant"):
        Initializer.from_json_value("Kaiming")
    with pytest.raises(ValueError, match="unknown field"):
        LinearConfig.from_dict({"d_input": 1, "d_output": 2, "colour": "red"})
    with pytest.raises(ValueError, match="expected int"):
        LinearConfig.from_dict({"d_input": "1", "d_output": 2})


def test_an_enum_field_may_not_shadow_an_enum_method():
    class _Bad(ConfigEnum):
        def describe(self):
            return "x"

    with pytest.raises(TypeError, match="clashes"):
        class A(_Bad):
            describe: int


def test_custom_enums_round_trip():
    class Mode(ConfigEnum):
        pass

    class Off(Mode):
        pass

    class Fixed(Mode):
        level: int

    @config
    class _Holder:
        mode: Mode = Mode.Off

    assert _Holder.from_json(_Holder(Mode.Fixed(3)).to_json()) == _Holder(Mode.Fixed(3))


@pytest.mark.parametrize("prob", [-0.1, 1.0, 1.5, math.nan, math.inf])
def test_dropout_config_rejects_prob_outside_unit_interval_at_init(prob):
    cfg = DropoutConfig(prob)  # building the config is fine; init refuses
    with pytest.raises(ValueError, match="Dropout probability should be between 0 and 1") as err:
        cfg.init()
    assert str(prob) in str(err.value)


def test_dropout_config_accepts_zero_and_just_below_one():
    assert DropoutConfig(0.0).init().prob == 0.0
    assert DropoutConfig(0.999).init().prob == 0.999


@pytest.mark.parametrize("make", [
    lambda d: LinearConfig(0, 3).init(d),
    lambda d: LinearConfig(3, -1).init(d),
    lambda d: Conv2dConfig((3, 0), (3, 3)).init(d),
    lambda d: Conv2dConfig((3, 8), (0, 3)).init(d),
    lambda d: BatchNormConfig(0).init(d),
    lambda d: LayerNormConfig(0).init(d),
    lambda d: EmbeddingConfig(0, 3).init(d),
])
def test_sizes_that_are_not_positive_are_rejected_at_init(make):
    with pytest.raises(ValueError, match=r"Config\.\w+: expected a positive integer, found"):
        make(Device.ndarray())


def test_conv_groups_must_divide_both_channel_counts():
    with pytest.raises(ValueError) as err:
        Conv2dConfig((4, 6), (3, 3)).with_groups(4).init(Device.ndarray())
    assert str(err.value) == ("Both channels must be divisible by the number of groups. "
                              "Got channels_in=4, channels_out=6, groups=4")
    with pytest.raises(ValueError, match="divisible by the number of groups"):
        Conv1dConfig(3, 6, 3, groups=2).init(Device.ndarray())
    Conv2dConfig((4, 6), (3, 3)).with_groups(2).init(Device.ndarray())  # fine


def test_new_is_burns_spelling_of_the_constructor():
    assert LinearConfig.new(4, 2) == LinearConfig(4, 2)
    assert DropoutConfig.new(0.5).with_prob(0.25) == DropoutConfig(0.25)


# ----- the mechanism is discoverable: real methods, one __getattr__, explicit variants ---------
def test_with_builders_come_from_one_documented_getattr_and_show_in_dir():
    cfg = LinearConfig(4, 2)
    assert "with_bias" not in vars(LinearConfig)  # no per-field method patched on
    assert LinearConfig.__getattr__ is Config.__getattr__ and "with_" in Config.__getattr__.__doc__
    assert "with_bias" in dir(cfg) and "with_layout" in dir(cfg)
    assert cfg.with_bias.__name__ == "with_bias"
    with pytest.raises(AttributeError, match="its fields are d_input, d_output"):
        cfg.with_colour(1)
    with pytest.raises(AttributeError, match="no attribute 'colour'"):
        cfg.colour  # noqa: B018
    assert isinstance(cfg, Config) and not isinstance(Initializer.Ones, Config)


def test_variants_are_classes_deriving_their_enum():
    from minidl.nn import padding

    assert PaddingConfig2d.Explicit is padding.Explicit2d and issubclass(padding.Explicit2d, PaddingConfig2d)
    pad = PaddingConfig2d.Explicit(1, 2, 3, 4)
    assert (pad.top, pad.left, pad.bottom, pad.right) == (1, 2, 3, 4) and list(pad) == [1, 2, 3, 4]
    assert type(PaddingConfig2d.Same) is padding.Same2d and PaddingConfig2d.Same.variant == "Same"
    with pytest.raises(TypeError, match="not a tuple variant"):
        Initializer.Uniform(-1.0, 1.0)[0]
    assert callable(LinearLayout.Col) and not callable(Initializer.Uniform(-1.0, 1.0))
    with pytest.raises(TypeError, match="already has a variant named 'Same'"):
        class Same(PaddingConfig2d):
            pass


def test_an_annotation_that_names_nothing_visible_is_an_error_naming_the_config():
    def build():
        @config
        class _Lost:
            thing: Missing  # noqa: F821 - deliberately unresolvable

        return _Lost

    with pytest.raises(TypeError, match="_Lost: a field annotation names something not visible"):
        build()(1)
