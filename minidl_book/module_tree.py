"""The modules chapter's picture of a module: the tree its fields make.

``draw_tree(model)`` draws every field of ``model`` in field order: sub-modules, lists and
dicts as inner nodes, and each leaf with its dotted path, its kind (param, flag, running
state, constant; a node's constants share one box) and, for params and running states, its
shape and the last four hex digits of its id (a tied param shows the same id at two paths).
The kinds are coloured, so the walk, the record and the optimizer can be read off the same
figure; ``notes`` adds a remark to a leaf (where burn differs). ``draw_records(model)`` puts
minidl's nested record beside burn 0.22's flat one (one ``(path, id, data)`` row per tensor).
"""

from __future__ import annotations

from typing import Any

from minidl.module import Module, Param
from minidl.module.running import RunningState

__all__ = ["KIND_COLORS", "draw_map", "draw_params", "draw_records", "draw_tree", "flat_record",
           "leaves", "map_rows", "nested_lines", "rows"]

#: kind → (fill, stroke)
KIND_COLORS = {
    "param": ("#dbeafe", "#2563eb"),
    "flag": ("#fef3c7", "#d97706"),
    "running state": ("#dcfce7", "#16a34a"),
    "constant": ("#f3f4f6", "#9ca3af"),
}


def _kind(value: Any) -> str:
    if isinstance(value, Param):
        return "flag" if value.is_flag() else "param"
    if isinstance(value, RunningState):
        return "running state"
    return "constant"


def _children(value: Any) -> list[tuple[str, Any]] | None:
    """The named children of an inner node, or ``None`` for a leaf."""
    if isinstance(value, Module):
        return list(vars(value).items())
    if isinstance(value, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    return None


def leaves(model: Module) -> dict[str, str]:
    """Every leaf of ``model``'s field tree: dotted path → kind."""
    out: dict[str, str] = {}

    def walk(value: Any, path: str) -> None:
        children = _children(value)
        if children is None:
            out[path] = _kind(value)
            return
        for name, child in children:
            walk(child, f"{path}.{name}" if path else name)

    walk(model, "")
    return out


def rows(model: Module, root: str | None = None) -> list[dict]:
    """The tree as rows, in field order: depth, parent row, label, kind, detail."""
    out: list[dict] = [{"depth": 0, "parent": None, "label": root or type(model).__name__,
                        "kind": None, "detail": "", "path": ""}]

    def walk(value: Any, path: str, depth: int, parent: int) -> None:
        children = _children(value)
        constants = [n for n, c in children if _children(c) is None and _kind(c) == "constant"
                     and c is not None]
        for name, child in children:
            sub = f"{path}.{name}" if path else name
            if name in constants:
                continue
            if child is None:  # an absent part (a Linear built without its bias): its own row
                out.append({"depth": depth, "parent": parent, "label": sub, "kind": "constant",
                            "detail": f"no {name}: None", "path": sub})
                continue
            grand = _children(child)
            if grand is None:
                kind = _kind(child)
                detail = ""
                if kind == "param":
                    detail = f"{list(child.lazy_shape())}  id …{child.id[-4:]}"
                elif kind == "running state":
                    detail = f"{list(child.shape)}  id …{child.id[-4:]}"
                out.append({"depth": depth, "parent": parent, "label": sub, "kind": kind,
                            "detail": detail, "path": sub})
            else:
                out.append({"depth": depth, "parent": parent, "kind": None, "detail": "",
                            "label": f"{sub}: {type(child).__name__}", "path": sub})
                walk(child, sub, depth + 1, len(out) - 1)
        if constants:
            names = ", ".join(constants)
            label = f"{path}.{{{names}}}" if path and len(constants) > 1 else (
                f"{path}.{names}" if path else names)
            values = ", ".join(repr(c) for n, c in children if n in constants)
            out.append({"depth": depth, "parent": parent, "label": label, "kind": "constant",
                        "detail": values, "path": label})

    walk(model, "", 1, 0)
    return out


def draw_tree(model: Module, root: str | None = None, notes: dict[str, str] | None = None,
              title: str | None = None, width: float = 7.4):
    """Draw ``model``'s field tree with matplotlib; return the figure.

    ``notes`` maps a leaf's dotted path to a remark printed at the right (where burn differs).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    table = rows(model, root)
    notes = notes or {}
    h = 0.2 * len(table) + 0.55
    fig, ax = plt.subplots(figsize=(width, h))
    step, indent = 1.0, 0.32
    for i, r in enumerate(table):
        y = -i * step
        x = r["depth"] * indent
        if r["parent"] is not None:
            py = -r["parent"] * step
            px = (r["depth"] - 1) * indent + 0.08
            ax.plot([px, px, x - 0.03], [py - 0.35, y, y], color="#9ca3af", lw=0.8)
        if r["kind"] is None:
            ax.text(x, y, r["label"], va="center", fontsize=8.5, family="monospace",
                    weight="bold")
        else:
            fill, stroke = KIND_COLORS[r["kind"]]
            ax.text(x, y, r["label"], va="center", fontsize=8.5, family="monospace",
                    bbox={"boxstyle": "round,pad=0.2", "fc": fill, "ec": stroke, "lw": 0.8})
            ax.text(2.8, y, r["kind"], va="center", fontsize=8, color=stroke)
            ax.text(3.95, y, r["detail"], va="center", fontsize=8, family="monospace")
        if r["path"] in notes:
            ax.text(5.2 if r["parent"] is not None else 1.1, y, notes[r["path"]],
                    va="center", fontsize=7.5, color="#b91c1c", style="italic")
    ax.set_xlim(-0.05, 7.6)
    ax.set_ylim(-(len(table) - 0.4) * step, 0.6 * step)
    ax.axis("off")
    handles = [Patch(fc=f, ec=e, label=k) for k, (f, e) in KIND_COLORS.items()]
    ax.legend(handles=handles, loc="upper right", fontsize=7.5, ncol=2, frameon=False)
    if title:
        ax.set_title(title, fontsize=9.5, loc="left")
    fig.tight_layout()
    return fig


def nested_lines(record: Any, indent: str = "") -> list[str]:
    """minidl's nested record as indented lines, a tensor shown by its shape."""
    lines: list[str] = []
    items = record.items() if isinstance(record, dict) else enumerate(record)
    for key, value in items:
        if isinstance(value, (dict, list)):
            empty = "{}" if isinstance(value, dict) else "[]"
            lines.append(f"{indent}{key}: {empty if not value else ''}".rstrip())
            lines += nested_lines(value, indent + "  ")
        else:
            lines.append(f"{indent}{key}: {list(value.shape)}")
    return lines


def flat_record(model: Module) -> list[tuple[str, str, list[int]]]:
    """minidl's params and running states laid out by burn 0.22's record rule: every float
    tensor the walk reaches, in field order, as ``(path, id, shape)`` (minidl's ids)."""
    out: list[tuple[str, str, list[int]]] = []

    def walk(value: Any, path: str) -> None:
        children = _children(value)
        if children is None:
            kind = _kind(value)
            if kind == "param":
                out.append((path, value.id, list(value.lazy_shape())))
            elif kind == "running state":
                out.append((path, value.id, list(value.shape)))
            return
        for name, child in children:
            if isinstance(value, Module) and name.startswith("_"):
                continue
            walk(child, f"{path}.{name}" if path else name)

    walk(model, "")
    return out


def draw_records(model: Module, record: dict, width: float = 7.4):
    """minidl's nested ``record`` of ``model`` beside the same entries as a flat list (burn
    0.22's form); the figure."""
    import matplotlib.pyplot as plt

    left = nested_lines(record)
    right = [f"{path:<18} id …{pid[-4:]}  {shape}" for path, pid, shape in flat_record(model)]
    n = max(len(left), len(right))
    fig, (a, b) = plt.subplots(1, 2, figsize=(width, 0.19 * n + 0.7),
                               gridspec_kw={"width_ratios": [1, 1.25]})
    for ax, lines, title in ((a, left, "minidl: into_record(),\na nested dict (shapes)"),
                             (b, right, "the same entries laid out as burn 0.22's flat\n"
                                        "ModuleRecord: (path, id, data), minidl's ids")):
        for i, line in enumerate(lines):
            ax.text(0, -i, line, family="monospace", fontsize=8, va="center")
        ax.set_xlim(0, 1)
        ax.set_ylim(-n + 0.4, 0.8)
        ax.axis("off")
        ax.set_title(title, fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def draw_params(panels: dict[str, Module], width: float = 7.4, states: dict | None = None,
                states_title: str = "optimizer state, keyed by id"):
    """One panel per model: each param path (``first.weight``) with an arrow to the ``Param``
    object it holds, one box per object (a tied Param is one box with two arrows), labelled
    with the end of its id and its first value; with ``states`` (an optimizer's ``{id:
    state}``, Adam's ``moment_1``/``moment_2``), a last panel of one box per id holding the
    first value of each moment; the figure."""
    import matplotlib.pyplot as plt

    fill, stroke = KIND_COLORS["param"]
    n = len(panels) + (states is not None)
    fig, axes = plt.subplots(1, n, figsize=(width, 1.7), squeeze=False)
    if states is not None:
        ax = axes[0][-1]
        for i, (key, state) in enumerate(states.items()):
            rows = [f"id …{key[-4:]}"] + [
                f" {name} {float(getattr(state, name).to_numpy().ravel()[0]):+.1e}"
                for name in ("moment_1", "moment_2") if hasattr(state, name)]
            ax.text(0, (len(states) - 1) / 2 - i, "\n".join(rows), family="monospace",
                    fontsize=8, va="center", ha="left",
                    bbox={"boxstyle": "round", "fc": "#fef3c7", "ec": "#b45309"})
        ax.set_xlim(-0.02, 1.1)
        ax.set_ylim(-1.1, 1.1)
        ax.axis("off")
        ax.set_title(states_title, fontsize=9, loc="left")
    for ax, (title, model) in zip(axes[0], panels.items()):
        paths = model.parameters()
        objects = list({id(p): p for p in paths.values()}.values())
        ys = {id(p): (len(objects) - 1) / 2 - i for i, p in enumerate(objects)}
        for i, (path, param) in enumerate(paths.items()):
            y = (len(paths) - 1) / 2 - i
            ax.text(0, y, path, family="monospace", fontsize=8, va="center", ha="left",
                    bbox={"boxstyle": "round", "fc": "white", "ec": "#9ca3af"})
            ax.annotate("", xy=(0.5, ys[id(param)]), xytext=(0.3, y),
                        arrowprops={"arrowstyle": "->", "color": "#333333"})
        for param in objects:
            v = float(param.val().to_numpy().ravel()[0])
            ax.text(0.52, ys[id(param)], f"Param …{param.id[-4:]}\nfirst value {v:+.4f}",
                    family="monospace", fontsize=8, va="center", ha="left",
                    bbox={"boxstyle": "round", "fc": fill, "ec": stroke})
        ax.set_xlim(-0.02, 1.1)
        ax.set_ylim(-1.1, 1.1)
        ax.axis("off")
        ax.set_title(title, fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def _leaf_groups(model: Module) -> list[tuple[str, list[tuple[str, ...]]]]:
    """The leaves of ``model`` in field order, as ``(label, [field path, …])``: one entry
    per param, flag, running state or ``None``, and one per node for its constants."""
    out: list[tuple[str, list[tuple[str, ...]]]] = []

    def walk(value: Any, path: tuple[str, ...]) -> None:
        children = _children(value) or []
        constants = []
        for name, child in children:
            if isinstance(value, Module) and name.startswith("_"):
                continue
            sub = (*path, name)
            if _children(child) is not None:
                walk(child, sub)
            elif child is not None and _kind(child) == "constant":
                constants.append(sub)
            else:
                out.append((".".join(sub), [sub]))
        if constants:
            names = ", ".join(c[-1] for c in constants)
            prefix = ".".join(path) + "." if path else ""
            out.append((prefix + (f"{{{names}}}" if len(constants) > 1 else names),
                        constants))

    walk(model, ())
    return out


def _at(model: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        model = model[int(name)] if isinstance(model, (list, tuple)) else (
            model[name] if isinstance(model, dict) else getattr(model, name))
    return model


def map_rows(before: Module, after: Module) -> list[dict]:
    """Each leaf of ``before`` beside the same leaf of ``after`` (a map's result), in field
    order: ``relation`` is ``"new"`` (a new Param, same id), ``"tie"`` (the same Param as
    an earlier path, in both trees), ``"split"`` (tied before, a second Param with that id
    after), ``"shared"`` (the same object in both trees) or ``"changed"`` (anything else:
    a map bug)."""
    seen: dict[int, str] = {}
    out = []
    for label, paths in _leaf_groups(before):
        olds = [_at(before, p) for p in paths]
        news = [_at(after, p) for p in paths]
        old, new = olds[0], news[0]
        kind = "constant" if old is None else _kind(old)
        if kind == "param" and id(old) in seen:
            first = seen[id(old)]
            tied = _at(after, tuple(first.split(".")))
            relation = ("tie" if new is tied else
                        "split" if getattr(new, "id", None) == old.id else "changed")
            out.append({"label": label, "kind": kind, "relation": relation, "old": old,
                        "new": new, "tied_to": first})
            continue
        if kind == "param":
            seen[id(old)] = label
            relation = "new" if new is not old and new.id == old.id else "changed"
        else:
            same = all(n is o or (n == o and type(n) is type(o) and kind == "constant")
                       for o, n in zip(olds, news))
            relation = "shared" if same else "changed"
        out.append({"label": label, "kind": kind, "relation": relation, "old": old,
                    "new": new, "olds": olds})
    return out


def draw_map(before: Module, after: Module | None, width: float = 7.4,
             title: str | None = None, fn_label: str = "fn"):
    """``before`` and ``after`` (a map's result) leaf by leaf: a param as two boxes (the
    old Param, an arrow ``fn_label``, the new Param with the same id), a tie as arrows to
    the box of its first path, flags, running states and constants as one box spanning
    both trees (the same object); with ``after=None``, the ``before`` column alone (the
    question a map must answer, before it is written); the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    only_before = after is None
    table = map_rows(before, before if only_before else after)
    if only_before:  # every param row compares a Param with itself: draw it as "new"
        for r in table:
            if r["kind"] == "param" and r["relation"] == "changed":
                r["relation"] = "new"
            elif r["relation"] == "shared":
                r["relation"] = "before"
    n = len(table)
    fig, ax = plt.subplots(figsize=(width, 0.24 * n + 0.75))
    x_old, x_new, box_w = 2.25, 4.75, 2.15
    ys = {r["label"]: -i for i, r in enumerate(table)}
    text = {"va": "center", "fontsize": 8, "family": "monospace"}

    def box(x, y, w, kind, label, dashed=False):
        fill, stroke = KIND_COLORS.get(kind, ("#fee2e2", "#b91c1c"))
        ax.add_patch(FancyBboxPatch((x, y - 0.34), w, 0.68, boxstyle="round,pad=0.02",
                                    fc=fill, ec=stroke, lw=0.9,
                                    ls="--" if dashed else "-"))
        ax.text(x + 0.08, y, label, **text)

    for r in table:
        y = ys[r["label"]]
        ax.text(0, y, r["label"], **text)
        if r["relation"] == "tie":
            y0 = ys[r["tied_to"]]
            for x, side in ((x_old, 180), (x_new + box_w, 0))[:1 if only_before else 2]:
                ax.annotate("", xy=(x, y0), xytext=(x, y), arrowprops={
                    "arrowstyle": "->", "color": "#2563eb", "lw": 1.1,
                    "connectionstyle": f"arc,angleA={side},angleB={side},armA=9,armB=9"})
            ax.text(x_old + 0.08, y, "tie: the same Param", color="#2563eb", fontsize=8,
                    va="center")
            if only_before:
                continue
            ax.text(x_new + 0.08, y, "tie kept: one new Param", color="#2563eb",
                    fontsize=8, va="center")
        elif r["relation"] == "split":
            y0 = ys[r["tied_to"]]
            ax.annotate("", xy=(x_old, y0), xytext=(x_old, y), arrowprops={
                "arrowstyle": "->", "color": "#2563eb", "lw": 1.1,
                "connectionstyle": "arc,angleA=180,angleB=180,armA=9,armB=9"})
            ax.text(x_old + 0.08, y, "tie: the same Param", color="#2563eb", fontsize=8,
                    va="center")
            if only_before:
                continue
            what = "old Param" if r["new"] is r["old"] else "2nd Param"
            box(x_new, y, box_w, "split", f"{what} …{r['new'].id[-4:]}", dashed=True)
            note = "tie split: unmoved" if r["new"] is r["old"] else "tie split"
            ax.text(x_new + box_w + 0.08, y, note, color="#b91c1c", fontsize=8, va="center")
        elif r["relation"] == "new":
            shape = list(r["old"].lazy_shape())
            box(x_old, y, box_w, "param", f"Param …{r['old'].id[-4:]} {shape}")
            if only_before:
                continue
            box(x_new, y, box_w, "param", f"new Param …{r['new'].id[-4:]}")
            ax.annotate("", xy=(x_new - 0.03, y), xytext=(x_old + box_w + 0.05, y),
                        arrowprops={"arrowstyle": "->", "color": "#333333"})
        else:
            if r["kind"] == "constant":
                what = ", ".join(repr(o) for o in r["olds"])
            elif r["kind"] == "flag":
                what = f"Flag …{r['old'].id[-4:]}"
            else:
                what = f"RunningState …{r['old'].id[-4:]} {list(r['old'].shape)}"
            if only_before:
                box(x_old, y, box_w, r["kind"], what)
                continue
            mark = "same object in both" if r["relation"] == "shared" else "CHANGED"
            box(x_old, y, x_new + box_w - x_old, r["kind"], f"{what}   ({mark})")
    ax.text(0, 1.0, "path", fontsize=8.5, weight="bold", va="center")
    ax.text(x_old, 1.0, "before", fontsize=8.5, weight="bold", va="center")
    if not only_before:
        ax.text(x_new, 1.0, "after (same ids)", fontsize=8.5, weight="bold", va="center")
        ax.text((x_old + box_w + x_new) / 2, 1.0, fn_label, ha="center", va="center",
                fontsize=8, color="#333333")
    split = any(r["relation"] == "split" for r in table) and not only_before
    ax.set_xlim(-0.05, (x_old + box_w if only_before else x_new + box_w) + 0.3
                + 1.6 * split)
    ax.set_ylim(-n + 0.4, 1.5)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=9.5, loc="left")
    fig.tight_layout()
    return fig
