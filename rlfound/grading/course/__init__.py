"""The course layer: assignments of several exercises, rosters, late policy, points graded by
hand, regrades and the LMS export.

It sits above the grader of one exercise: it may import authoring, intake, scoring and
output, and only the command (:mod:`rlfound.cli`) and distribution import it.
"""

from rlfound.grading.course.assignment import Assignment, load_assignment, parse_time
from rlfound.grading.course.export import canvas_csv
from rlfound.grading.course.gradebook import columns, read_grades
from rlfound.grading.course.late import late_days, multiplier
from rlfound.grading.course.manual import ManualPoints, read_manual
from rlfound.grading.course.run import Inputs, Outcome, grade_assignment
from rlfound.grading.course.tables import Student, read_extensions, read_roster, read_submitted

__all__ = [
    "Assignment",
    "Inputs",
    "ManualPoints",
    "Outcome",
    "Student",
    "canvas_csv",
    "columns",
    "grade_assignment",
    "late_days",
    "load_assignment",
    "multiplier",
    "parse_time",
    "read_extensions",
    "read_grades",
    "read_manual",
    "read_roster",
    "read_submitted",
]
