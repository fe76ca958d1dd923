"""The `space-robot-identify` command: glue between the identification core and files, bags and the runtime.

Reads rosbag2 recordings (rosbags) and CSV files into RecordedSignals, records synthetic data by running
scenarios in the standalone runtime, owns the output directory, draws the plots and writes summary.json.
"""
