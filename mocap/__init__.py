"""Motion capture: loading clips (quadsim.mocap.motion), their footfalls
(quadsim.mocap.footfalls) and fitting the dog's skeleton to them (quadsim.mocap.retarget)."""
