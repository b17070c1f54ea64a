"""The reference (Python) pieces of the pushdown guide the native engine replaced (issue 39, slice
3): kept only for the differential tests (tests/guides/test_native_frames.py)."""
