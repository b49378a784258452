"""Fails at import through a chain of functions with huge names and a huge message: the
traceback alone would be hundreds of megabytes if every frame were kept and copied."""

NAMES = ["f" * 200_000 + str(level) for level in range(30)]
SOURCE = "".join(
    f"def {name}():\n    return {NAMES[index + 1] if index + 1 < len(NAMES) else 'boom'}()\n"
    for index, name in enumerate(NAMES)
)


def boom():
    raise type("E" * 100_000, (Exception,), {})("x" * 5_000_000)


exec(compile(SOURCE, "huge_identifiers.py", "exec"))
globals()[NAMES[0]]()
