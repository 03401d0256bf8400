"""The paper's skills beside the gaits: sitting, lying down and standing up (skill files in
presets/, the posture controller, the outcomes checked from a run)."""
