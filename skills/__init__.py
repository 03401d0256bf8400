"""The paper's skills beside the gaits: sitting, lying down, standing up and getting up
after a fall (skill files in presets/, the posture controller, the outcomes checked from a
run, the recovery that hands a fallen dog to the get-up)."""
