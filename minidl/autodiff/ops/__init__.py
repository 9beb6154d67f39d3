"""The backward steps, one class per op, grouped by family (burn-autodiff ``ops/``)."""
