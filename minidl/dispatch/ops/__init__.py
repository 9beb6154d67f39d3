"""Generated forwarding mixins of Dispatch, one file per op family (see ``minidl/dispatch/write_forwarders.py``)."""
