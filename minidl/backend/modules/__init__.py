"""Generic implementations behind ModuleOps defaults (burn-backend ``ops/modules/*.rs``)."""
