import numpy as np
from myia import myia
def f(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x * i
        i = i + 1
    return s
def g(x, y):
    if x > y:
        return x - y
    return y * 2.0
for fn, a in [(f,(2.0,5)), (g,(1.0,2.0))]:
    m = myia(fn, backend="jax"); print(m(*a)); print(m.generated_code(*a)); print(m.specialization(*a).executable.reason)
