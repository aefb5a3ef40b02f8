"""torch.utils.data of the shape-only stand-in: Dataset and an in-process DataLoader."""
import torch


class Dataset:
    pass


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, pin_memory=False,
                 num_workers=0, generator=None, prefetch_factor=None):
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        for b in range(len(self)):
            items = [self.dataset[i] for i in range(b * self.batch_size,
                                                    min((b + 1) * self.batch_size, len(self.dataset)))]
            xs = [x for x, _ in items]
            ys = [y for _, y in items]
            assert all(isinstance(y, int) for y in ys)
            yield torch.Tensor((len(xs),) + xs[0].shape), torch.Tensor((len(ys),))
