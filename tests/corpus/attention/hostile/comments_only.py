# expect: zero
# assignment: attention
# base: none
# message: `softmax` is not defined
# why: a file with nothing but comments; it loads, defines nothing, and every check fails saying which name is missing
