"""Generated forwarding mixins of Dispatch, one file per op family (see ``codegen.py``)."""
