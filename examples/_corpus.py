"""The text corpus the language-model examples train on: the fortune
cookies of Debian's `fortunes` package, or any text file given by --text."""
import os
import sys

FORTUNES_DIR = '/usr/share/games/fortunes'
DEFAULT_FILES = ('fortunes', 'goedel', 'science', 'wisdom', 'computers')


def load_text(path=None, max_chars=None):
    """The text of `path`, or of the default fortune files; exits with a
    message naming the package to install when the corpus is absent."""
    if path is not None:
        if not os.path.isfile(path):
            sys.exit(f'error: --text {path}: no such file')
        paths = [path]
    else:
        paths = [os.path.join(FORTUNES_DIR, f) for f in DEFAULT_FILES]
        paths = [p for p in paths if os.path.isfile(p)]
        if not paths:
            sys.exit(f'error: no corpus: {FORTUNES_DIR} is missing. Install the Debian package '
                     '`fortunes` (sudo apt-get install fortunes, or tools/deps.sh), '
                     'or pass --text PATH to any text file.')
    text = ''
    for p in paths:
        with open(p, encoding='utf-8', errors='replace') as f:
            text += f.read()
    return text[:max_chars] if max_chars else text
