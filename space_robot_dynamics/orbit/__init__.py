"""The orbital environment (docs/orbit.md): the scenario's `orbit:` section, the central body's gravity, the
reference orbit and its LVLH frame, and the gravity every body of a multibody system feels relative to them."""
