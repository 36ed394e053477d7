"""The package version, read by the build and by ``reins --version``."""

__version__ = "0.1.0"
