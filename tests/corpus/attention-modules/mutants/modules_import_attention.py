# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: could not be loaded|attention
# clause: modules.graded_alone
# diagnosis: none (the file does not load when graded alone: nothing runs to compare)
# why: attention_modules.py imports its softmax from the student's attention.py, which is not there when the file is graded alone
# may_fail: *

from attention import softmax  # noqa: E402 - the other exercise file is not part of this submission
