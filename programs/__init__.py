"""The DSPy modules, their composition, LM settings and the code sandbox."""

import os

# DSPy's HTTP engine (and litellm) otherwise download a model price list on first use.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
