"""Where the book lives and which release students install: read from ``_config.yml``.

``_config.yml``'s ``repository`` section is the single source: ``url`` (the GitHub repository)
and ``branch`` (the git ref that Colab opens and that a notebook's install cell installs: ``main``,
or a term's tag such as ``term-2027``). A private fork or a tagged term release changes those two
lines only; the course kit's generated notebooks take their links from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"


@dataclass(frozen=True)
class Repository:
    """A GitHub repository and the git ref students use.

    Example:
        >>> r = Repository("entmax-book/entmax-book", "term-2027")
        >>> r.colab_url("student/labs/ch4_lab.ipynb")
        'https://colab.research.google.com/github/entmax-book/entmax-book/blob/term-2027/student/labs/ch4_lab.ipynb'
        >>> r.pip_url()
        'git+https://github.com/entmax-book/entmax-book.git@term-2027'
    """

    name: str  # owner/name
    release: str  # a branch or a tag

    def colab_url(self, path: str) -> str:
        """The Colab link that opens ``path`` (relative to the repository root) at the release."""
        return f"https://colab.research.google.com/github/{self.name}/blob/{self.release}/{path}"

    def raw_url(self, path: str) -> str:
        """The raw file (or folder prefix) ``path`` at the release."""
        return f"https://raw.githubusercontent.com/{self.name}/{self.release}/{path}"

    def pip_url(self) -> str:
        """What ``pip install`` takes to install the book's packages at the release."""
        return f"git+https://github.com/{self.name}.git@{self.release}"

    def retarget(self, text: str) -> str:
        """``text`` with the chapters' own repository and release (:data:`CHAPTERS_POINT_AT`, as
        the chapters' install cells and links are written) replaced by this one's.

        Example:
            >>> Repository("me/fork", "term-2027").retarget("pip install git+https://github.com/entmax-book/entmax-book.git@main")
            'pip install git+https://github.com/me/fork.git@term-2027'
        """
        source = CHAPTERS_POINT_AT
        for old, new in (
            (source.pip_url(), self.pip_url()),
            (f"/{source.name}/blob/{source.release}/", f"/{self.name}/blob/{self.release}/"),
            (f"/{source.name}/{source.release}/", f"/{self.name}/{self.release}/"),
        ):
            text = text.replace(old, new)
        return text

    def fill(self, text: str) -> str:
        """``text`` with the placeholders ``{{repository}}`` and ``{{release}}`` filled in."""
        return text.replace("{{repository}}", self.name).replace("{{release}}", self.release)


#: The repository and release the chapters' own install cells and links are written for; the
#: generated editions point at :func:`load`'s instead (:meth:`Repository.retarget`).
CHAPTERS_POINT_AT = Repository("entmax-book/entmax-book", "main")


def load(config: Path = CONFIG) -> Repository:
    """The repository and release named in ``_config.yml``'s ``repository`` section.

    Args:
        config: the Jupyter Book configuration file.

    Returns:
        The :class:`Repository`.

    Raises:
        ValueError: ``repository.url`` is not a GitHub URL, or ``repository.branch`` is missing.
    """
    section = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("repository") or {}
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?", str(section.get("url", "")))
    if not match:
        raise ValueError(
            f"{config}: repository.url must be https://github.com/OWNER/NAME, not {section.get('url')!r}"
        )
    if not section.get("branch"):
        raise ValueError(f"{config}: repository.branch (the release students install) is missing")
    return Repository(match.group(1), str(section["branch"]))
