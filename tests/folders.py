"""What a build wrote, for tests that compare two builds or a folder before and after."""

from pathlib import Path


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
