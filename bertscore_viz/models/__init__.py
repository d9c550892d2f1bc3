"""Models: names, load locations and default layers (spec, known), the catalog and its offline installs (catalog,
install), and the multilingual model's conversion (convert_e5).

The names most callers need are here too: ``from bertscore_viz.models import resolve_model``.
"""

from bertscore_viz.models.known import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME, MODEL_LAYERS
from bertscore_viz.models.spec import ModelSpec, bundled_model_path, default_model_name, resolve_model

__all__ = ["BUNDLED_DEFAULT_LAYER", "BUNDLED_MODEL_NAME", "MODEL_LAYERS", "ModelSpec", "bundled_model_path",
           "default_model_name", "resolve_model"]
