"""Define LeNet-5 (Unlu 2020's network) in PyTorch and export it to ONNX.

Run it yourself where PyTorch is installed (`pip install torch onnx`); nnopt does not
need torch. Train the model first in real use; the weights here are random.
"""

import torch
from torch import nn


class LeNet5(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(16 * 5 * 5, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
        x = x.view(x.shape[0], -1)
        x = torch.relu(self.f1(x))
        x = torch.relu(self.f2(x))
        return self.f3(x)


if __name__ == "__main__":
    model = LeNet5().eval()
    example = torch.randn(1, 1, 32, 32)
    torch.onnx.export(model, (example,), "lenet5.onnx", input_names=["input"],
                      output_names=["output"], opset_version=20, dynamo=True)
    print("wrote lenet5.onnx")
