"""Architecture-aware initialization and learning rates (Chen et al., ICLR 2024).

Like mup: functions that take the model (and its graph) and initialize weights in place or
return parameter groups for a stock ``torch.optim.SGD``. With scaling off (init ``default``,
LR rule ``fixed``) the model and LRs are exactly the default protocol's. The values a
protocol's ``init`` may take are registered in :mod:`nasrescale.scaling.init_rules`, those of its
``lr_rule`` in :mod:`nasrescale.scaling.lr_rules`.
"""

from .init import apply_init, weight_rules
from .lr import LrPlan, lr_plan, param_groups
from .lr_rules import LR_RULES, LrRule, register_lr_rule
from .init_rules import INIT_REGISTRY, INIT_RULE_NAMES, InitRule, get_init_rule, init_model

__all__ = ["apply_init", "weight_rules", "LrPlan", "lr_plan", "param_groups", "LR_RULES", "LrRule", "register_lr_rule",
           "INIT_REGISTRY", "INIT_RULE_NAMES", "InitRule", "get_init_rule", "init_model"]
