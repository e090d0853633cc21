# source: https://github.com/syncdoth/RetNet/issues/1
# exercise: bag_of_past
# accept: device|cpu|cuda|gpu|dtype|float32|half|float16
# why: builds the counts 1..T with a bare torch.arange(...).float(): always float32 on the CPU, so CUDA inputs fail and float16 inputs come back as float32
# base: base_functional
def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    T = v.shape[-2]
    counts = torch.arange(1, T + 1).float()  # 1, 2, ..., T
    return v.cumsum(dim=-2) / counts[:, None]
