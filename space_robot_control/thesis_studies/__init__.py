"""The seed 004 thesis studies and their plant: the ch. 6 hybrid force/motion case (force_motion_study.py, sec. 6.3)
and the ch. 7 adaptive inverse-dynamics case on the Hubble (adaptive_study.py, sec. 7.4, Table 7.2), each run on
the welded-contact plant (welded_contact_plant.py: the hand held on the target by a rigid 6D contact from t = 0, as
the thesis assumes, with the plant's exact acceleration and contact force) by `space-robot-sim thesis_force_motion`
and `space-robot-sim hubble_adaptive` (space_robot_runtime/study_run.py, config/studies/).

They are the oracle, not the product: the product's grasp is the simulator's contact loop
(space_robot_dynamics/contact/), and the node-graph scenarios thesis_force_motion_graph and hubble_adaptive_graph,
which run the same laws as the controller node's force_motion mode (force_motion_control.py,
adaptive_force_motion_control.py) on that grasp, are tested against these studies. ForceMotionStudy,
AdaptiveStudy and their settings readers are also exported by space_robot_control.
"""
