"""Model building: URDF/xacro sources, model configuration and the Pinocchio system model."""
