"""Whole networks with every convolution routed through rmcp (policy "always") against the
same networks on PyTorch's own convolutions: outputs, gradients and a few SGD steps agree.
An EEG-style network (temporal (1,k), spatial (19,1) depthwise, separable, plus Conv1d) and
a ResNet basic block with a strided 1x1 downsample."""
from torch_support import assert_close, load_ops  # first: it puts the checkout's python/ on sys.path
import copy

import pytest
import torch
import torch.nn as nn

import rmcp.torch as rt


class EegNet(nn.Module):
    """EEGNet-like: 19 electrodes x T samples."""

    def __init__(self, electrodes=19, classes=4):
        super().__init__()
        self.temporal = nn.Conv2d(1, 8, (1, 33), padding=(0, 16), bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.spatial = nn.Conv2d(8, 16, (electrodes, 1), groups=8, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool1 = nn.AvgPool2d((1, 4))
        self.separable_depthwise = nn.Conv2d(16, 16, (1, 9), padding="same", groups=16, bias=False)
        self.separable_pointwise = nn.Conv2d(16, 16, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(16)
        self.pool2 = nn.AvgPool2d((1, 4))
        self.sequence = nn.Conv1d(16, 12, 3, stride=2, dilation=2)
        self.head = nn.Linear(12 * 2, classes)

    def forward(self, x):
        x = self.bn1(self.temporal(x))
        x = self.pool1(nn.functional.elu(self.bn2(self.spatial(x))))
        x = self.separable_pointwise(self.separable_depthwise(x))
        x = self.pool2(nn.functional.elu(self.bn3(x)))  # [N, 16, 1, T/16]
        x = nn.functional.elu(self.sequence(x.squeeze(2)))
        return self.head(x.flatten(1))


class BasicBlock(nn.Module):
    """ResNet basic block, stride 2 with a 1x1 projection."""

    def __init__(self, inplanes=8, planes=16, stride=2):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.downsample(x))


class BlockClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = BasicBlock()
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.block(torch.relu(self.stem(x))).mean((2, 3)))


CASES = {
    "eeg": (EegNet, (6, 1, 19, 128), 4, 5),  # model, input, classes, convolutions per forward
    "resnet-block": (BlockClassifier, (6, 3, 16, 16), 5, 4),
}


@pytest.fixture(autouse=True)
def clean_state():
    load_ops()
    yield
    rt.disable()


def _step(model, optimiser, x, y):
    optimiser.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    optimiser.step()
    return loss.detach(), grads


def _train(model, policy, x, y, steps):
    rt.enable(profile=None, policy=policy)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = [_step(model, optimiser, x, y) for _ in range(steps)]
    counts = rt.stats()
    rt.disable()
    return history, counts


@pytest.mark.parametrize("name", CASES)
def test_routed_network_trains_like_native(name):
    make, shape, classes, convs = CASES[name]
    torch.manual_seed(0)
    native_model = make()
    routed_model = copy.deepcopy(native_model)
    x = torch.randn(shape)
    y = torch.randint(0, classes, (shape[0],))
    steps = 4

    with torch.no_grad():
        rt.enable(profile=None, policy="always")
        routed_eval = routed_model.eval()(x)
        rt.disable()
        native_eval = native_model.eval()(x)
    assert_close(routed_eval, native_eval, torch.float32, "eval output")

    native_history, native_counts = _train(native_model.train(), "never", x, y, steps)
    routed_history, routed_counts = _train(routed_model.train(), "always", x, y, steps)
    assert native_counts["rmcp"] == 0 and native_counts["native"] == steps * convs
    assert routed_counts["rmcp"] == steps * convs and routed_counts["native"] == 0

    for step, ((native_loss, native_grads), (routed_loss, routed_grads)) in enumerate(
            zip(native_history, routed_history)):
        # Measured differences are ~1e-7 (float32 rounding, summation order); allow 1e-5.
        assert_close(routed_loss, native_loss, torch.float32, f"loss at step {step}", 0.1)
        for index, (routed, native) in enumerate(zip(routed_grads, native_grads)):
            assert_close(routed, native, torch.float32, f"gradient {index} at step {step}", 0.1)
    assert routed_history[-1][0] < routed_history[0][0]  # it learns
    for routed, native in zip(routed_model.parameters(), native_model.parameters()):
        assert_close(routed.detach(), native.detach(), torch.float32, "parameters after training", 0.1)
