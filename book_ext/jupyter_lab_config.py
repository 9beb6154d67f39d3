"""JupyterLab configuration for ``make lab`` (``jupyter lab --config=book_ext/jupyter_lab_config.py``).

The chapters open as notebooks through jupytext, with what the site folds folded, and a
chapter that is only read and run is never rewritten (book_ext/lab_contents.py). The
server listens on 127.0.0.1 only; the kernel is this project's .venv (the Makefile puts the
checkout first on PYTHONPATH and keeps numba's cache in the project).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # lab_contents, for the server process

c = get_config()  # noqa: F821 (provided by jupyter when it loads this file)
c.ServerApp.ip = "127.0.0.1"
c.ServerApp.root_dir = str(HERE.parent / "chapters")
c.ServerApp.contents_manager_class = "lab_contents.BookContentsManager"
c.ContentsManager.allow_hidden = False
# the python3 kernel, plus book_ext/lab_glue.py imported first (glue values for the prose)
c.ServerApp.kernel_spec_manager_class = "lab_contents.BookKernelSpecManager"
# offline: no announcements feed, no update check, no PyPI listing of extensions
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
c.LabApp.extension_manager = "readonly"
if os.geteuid() == 0:  # a container or CI: JupyterLab refuses root without this
    c.ServerApp.allow_root = True
