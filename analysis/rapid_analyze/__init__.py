"""rapid-analyze: the tables and figures of a design review from a rapid-sweep result file.

Each subcommand has a module here whose functions take the points DataFrame of
rapid_results.load() (and the /variants table) and give back a Table (common.Table: a
DataFrame with its title and notes); plots.py draws them (matplotlib figures),
textout.py prints them, html_report.py puts them on one page, cli.py parses the command
line (analysis/rapid-analyze).
"""

# The release this copy belongs to: the project's VERSION in CMakeLists.txt (ctest
# cli.rapid_analyze_version checks that they agree).
__version__ = "0.1.0"
