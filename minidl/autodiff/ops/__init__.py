"""The ops of ``Autodiff[B]``, one family per file, laid out as burn-autodiff's ``src/ops/``.

Each file holds a family's backward steps (one :class:`~minidl.autodiff.step.Step` class per
op: its forward and backward side by side, named after the op, ``Matmul``, ``Conv2dWithBias``)
and, below them, the mixin with the overrides that record them (``float_matmul`` records a
``Matmul``), the way burn declares the backward struct inside the op's function:

=================  ==========================  ===============================================
file               mixin                       burn-autodiff
=================  ==========================  ===============================================
``base.py``        ``AutodiffOpsBase``         ``ops/base.rs``: ``record`` / ``finish`` (OpsPrep)
``tensor.py``      ``AutodiffTensorOps``       ``ops/tensor.rs``: creation, cast, graph hooks,
                                               comparisons
``arithmetic.py``  ``AutodiffArithmeticOps``   ``ops/tensor.rs``: add ... matmul
``math.py``        ``AutodiffMathOps``         ``ops/tensor.rs``: exp, log, ...
``reduce.py``      ``AutodiffReduceOps``       ``ops/tensor.rs`` + ``ops/maxmin.rs``
``layout.py``      ``AutodiffLayoutOps``       ``ops/tensor.rs``: reshape ... mask_fill
``activation.py``  ``AutodiffActivationOps``   ``ops/activation.rs``
``module.py``      ``AutodiffModuleOps``       ``ops/module.rs``
``int_tensor.py``  ``AutodiffIntOps``          ``ops/int_tensor.rs``
``bool_tensor.py`` ``AutodiffBoolOps``         ``ops/bool_tensor.rs``
=================  ==========================  ===============================================

:class:`~minidl.autodiff.backend.Autodiff` combines the mixins.
"""
