"""Exceptions raised by the emulator (importable without triton or torch)."""


class EmulatorHang(RuntimeError):
    """An emulated launch did not finish in time; ``report`` says who was stuck where."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


class ProgramAborted(BaseException):
    """Raised inside a program thread to stop it once its launch has been abandoned.

    A BaseException so that kernel code and ``except Exception`` in stand-ins cannot swallow it.
    """
