# The two set-up commands of the README. Each installs what it needs.
PY ?= python3
PIP = $(PY) -m pip install -q

.PHONY: install demo test lint

# torch and triton are taken as found (the GPU image has its own); on a bare
# CPU machine the CPU build of torch 2.13.0 and triton 3.6.0 are installed.
install:
	@$(PY) -c "import torch" 2>/dev/null || $(PIP) "torch==2.13.0"
	@$(PY) -c "import triton" 2>/dev/null || $(PIP) "triton==3.6.0"
	@$(PIP) -e ".[test]"

demo: install
	convdispatch demo

test: install
	TRITON_INTERPRET=1 $(PY) -m pytest -q -n 2 -p no:benchmark

lint:
	ruff check .
