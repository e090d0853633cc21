# expect: zero
# assignment: attention
# base: reference
# message: could not be loaded.*SystemExit
# why: the file ends with sys.exit(0) at module level (after correct functions); loading fails, so no check may pass

import sys

sys.exit(0)
