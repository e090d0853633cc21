"""A zygote whose import never ends (a hung network filesystem, a torch that waits forever): its fork
server never gets to read its "alive" pipe, so only a signal stops it."""

import threading

threading.Event().wait()
