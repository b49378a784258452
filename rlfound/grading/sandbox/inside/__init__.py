"""The only files copied into the sandbox: the wire protocol, the worker's main script and the
private root's launcher. They import the standard library only (NumPy inside the functions that
decode arrays), because nothing else is there."""

__all__: list[str] = []
