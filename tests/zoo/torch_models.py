"""PyTorch architectures of the zoo, at small widths and inputs so each model stays well
under 1 MB and runs in milliseconds. torchvision has no CPU build that imports beside
torch 2.13, so the torchvision ones are written here after torchvision's definitions
(same blocks and operator patterns: Fire, channel shuffle, squeeze-excitation with
hardsigmoid or sigmoid, MBConv, BasicBlock, global average pooling by AdaptiveAvgPool2d or
`mean([2, 3])`), with random weights.

Imported by make_torch_zoo.py only; needs torch, which the tests do not.
"""

from __future__ import annotations

import torch
from torch import nn


def conv_bn(inputs: int, outputs: int, kernel: int, stride: int = 1, groups: int = 1,
            activation: type[nn.Module] | None = nn.ReLU) -> nn.Sequential:
    layers = [nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(outputs)]
    if activation is not None:
        layers.append(activation())
    return nn.Sequential(*layers)


class Fire(nn.Module):
    """SqueezeNet's squeeze 1x1, then 1x1 and 3x3 expands concatenated on channels."""

    def __init__(self, inputs: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(inputs, squeeze, 1), nn.ReLU())
        self.expand1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.expand3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.expand1(x), self.expand3(x)], 1)


def squeezenet() -> nn.Module:
    """SqueezeNet 1.1 layout (ceil-mode max pools, conv classifier, adaptive average pool)."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(16, 8, 16), Fire(32, 8, 16),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(32, 12, 24), Fire(48, 12, 24),
        nn.Dropout(0.5), nn.Conv2d(48, 10, 1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten())


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    batch, channels, height, width = x.shape
    x = x.view(batch, groups, channels // groups, height, width)
    return torch.transpose(x, 1, 2).contiguous().view(batch, channels, height, width)


class ShuffleUnit(nn.Module):
    """ShuffleNetV2's unit: split channels (stride 1) or two branches (stride 2), shuffle."""

    def __init__(self, inputs: int, outputs: int, stride: int):
        super().__init__()
        half = outputs // 2
        self.stride = stride
        if stride > 1:
            self.branch1 = nn.Sequential(conv_bn(inputs, inputs, 3, stride, inputs, None),
                                         conv_bn(inputs, half, 1))
        branch_inputs = inputs if stride > 1 else half
        self.branch2 = nn.Sequential(conv_bn(branch_inputs, half, 1),
                                     conv_bn(half, half, 3, stride, half, None),
                                     conv_bn(half, half, 1))

    def forward(self, x):
        if self.stride == 1:
            left, right = x.chunk(2, dim=1)
            out = torch.cat((left, self.branch2(right)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, widths=(12, 24, 48, 96), repeats=(2, 2, 1), last=128, classes=10):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, widths[0], 3, 2), nn.MaxPool2d(3, 2, 1))
        stages = []
        for inputs, outputs, count in zip(widths, widths[1:], repeats):
            stages.append(ShuffleUnit(inputs, outputs, 2))
            stages += [ShuffleUnit(outputs, outputs, 1) for _ in range(count - 1)]
        self.stages = nn.Sequential(*stages)
        self.conv5 = conv_bn(widths[-1], last, 1)
        self.fc = nn.Linear(last, classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.stem(x)))
        return self.fc(x.mean([2, 3]))  # torchvision's global pool


class SqueezeExcitation(nn.Module):
    """Channel gate: global average pool, 1x1 down, activation, 1x1 up, gate, scale."""

    def __init__(self, channels: int, squeeze: int, activation=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.activation = activation()
        self.gate = gate()

    def forward(self, x):
        scale = self.gate(self.fc2(self.activation(self.fc1(self.pool(x)))))
        return scale * x


class InvertedResidual(nn.Module):
    """MobileNetV3 / EfficientNet MBConv: expand 1x1, depthwise, optional SE, project."""

    def __init__(self, inputs, kernel, expanded, outputs, stride, activation, se_gate=None):
        super().__init__()
        self.residual = stride == 1 and inputs == outputs
        layers = []
        if expanded != inputs:
            layers.append(conv_bn(inputs, expanded, 1, activation=activation))
        layers.append(conv_bn(expanded, expanded, kernel, stride, expanded, activation))
        if se_gate is not None:
            squeeze = max(8, expanded // 4)
            se_activation = nn.SiLU if se_gate is nn.Sigmoid else nn.ReLU
            layers.append(SqueezeExcitation(expanded, squeeze, se_activation, se_gate))
        layers.append(conv_bn(expanded, outputs, 1, activation=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return out + x if self.residual else out


MOBILENETV3_BLOCKS = [  # kernel, expanded, outputs, squeeze-excitation, activation, stride
    (3, 16, 8, True, nn.ReLU, 2), (3, 36, 12, False, nn.ReLU, 2),
    (3, 44, 12, False, nn.ReLU, 1), (5, 48, 20, True, nn.Hardswish, 2),
    (5, 120, 20, True, nn.Hardswish, 1), (5, 60, 24, True, nn.Hardswish, 1)]


def mobilenetv3() -> nn.Module:
    """MobileNetV3-Small at about half width."""
    layers, channels = [conv_bn(3, 8, 3, 2, activation=nn.Hardswish)], 8
    for kernel, expanded, outputs, se, activation, stride in MOBILENETV3_BLOCKS:
        gate = nn.Hardsigmoid if se else None
        layers.append(InvertedResidual(channels, kernel, expanded, outputs, stride, activation,
                                       gate))
        channels = outputs
    layers += [conv_bn(channels, 144, 1, activation=nn.Hardswish), nn.AdaptiveAvgPool2d(1),
               nn.Flatten(), nn.Linear(144, 256), nn.Hardswish(), nn.Dropout(0.2),
               nn.Linear(256, 10)]
    return nn.Sequential(*layers)


EFFICIENTNET_STAGES = [  # expansion, kernel, stride, outputs, repeats
    (1, 3, 1, 8, 1), (6, 3, 2, 12, 2), (6, 5, 2, 20, 2), (6, 3, 2, 40, 1)]


def efficientnet() -> nn.Module:
    """EfficientNet-B0 layout (SiLU, sigmoid-gated SE, MBConv stages) at quarter width."""
    layers, channels = [conv_bn(3, 16, 3, 2, activation=nn.SiLU)], 16
    for expansion, kernel, stride, outputs, repeats in EFFICIENTNET_STAGES:
        for index in range(repeats):
            layers.append(InvertedResidual(channels, kernel, channels * expansion, outputs,
                                           stride if index == 0 else 1, nn.SiLU, nn.Sigmoid))
            channels = outputs
    layers += [conv_bn(channels, 160, 1, activation=nn.SiLU), nn.AdaptiveAvgPool2d(1),
               nn.Flatten(), nn.Dropout(0.2), nn.Linear(160, 10)]
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    """ResNet's two 3x3 convolutions with an identity or 1x1-projection shortcut."""

    def __init__(self, inputs: int, outputs: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(conv_bn(inputs, outputs, 3, stride),
                                  conv_bn(outputs, outputs, 3, activation=None))
        self.shortcut = nn.Identity()
        if stride != 1 or inputs != outputs:
            self.shortcut = conv_bn(inputs, outputs, 1, stride, activation=None)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.body(x) + self.shortcut(x))


def resnet(widths=(16, 24, 32, 48)) -> nn.Module:
    """ResNet-18 layout (7x7 stem, max pool, four stages of two BasicBlocks) at small width."""
    layers, channels = [conv_bn(3, widths[0], 7, 2), nn.MaxPool2d(3, 2, 1)], widths[0]
    for stage, width in enumerate(widths):
        layers.append(BasicBlock(channels, width, 1 if stage == 0 else 2))
        layers.append(BasicBlock(width, width, 1))
        channels = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)]
    return nn.Sequential(*layers)


class EncoderBlock(nn.Module):
    """Pre-norm transformer encoder block: LayerNorm, multi-head self-attention (softmax of
    scaled Q K^T), residual, LayerNorm, GELU feed-forward, residual."""

    def __init__(self, dim=32, heads=4, hidden=64, activation=nn.GELU):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.project = nn.Linear(dim, dim)
        self.ffn = nn.Sequential(nn.Linear(dim, hidden), activation(), nn.Linear(hidden, dim))

    def attention(self, x):
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        weights = torch.softmax(q @ k.transpose(-2, -1) * (dim // self.heads) ** -0.5, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(batch, tokens, dim)
        return self.project(out)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class Recurrent(nn.Module):
    """A GRU or LSTM over a short sequence, classifying its last step."""

    def __init__(self, cell=nn.GRU, features=8, hidden=16, classes=4):
        super().__init__()
        self.rnn = cell(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


class UNet(nn.Module):
    """Two-level U-Net: skip connections concatenated on channels, one up-sampling by
    ConvTranspose2d and one by nearest-neighbour Upsample, sigmoid mask."""

    def __init__(self, channels=(8, 16, 32), inputs=1, classes=2):
        super().__init__()
        c1, c2, c3 = channels
        self.enc1, self.enc2 = self.double(inputs, c1), self.double(c1, c2)
        self.bottom = self.double(c2, c3)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(c3, c2, 2, stride=2)
        self.dec2 = self.double(2 * c2, c2)
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                 nn.Conv2d(c2, c1, 3, padding=1))
        self.dec1 = self.double(2 * c1, c1)
        self.out = nn.Conv2d(c1, classes, 1)

    @staticmethod
    def double(inputs, outputs):
        return nn.Sequential(conv_bn(inputs, outputs, 3), conv_bn(outputs, outputs, 3))

    def forward(self, x):
        skip1 = self.enc1(x)
        skip2 = self.enc2(self.pool(skip1))
        x = self.bottom(self.pool(skip2))
        x = self.dec2(torch.cat([self.up2(x), skip2], 1))
        x = self.dec1(torch.cat([self.up1(x), skip1], 1))
        return torch.sigmoid(self.out(x))


def global_pool_head() -> nn.Module:
    """A classifier head as PyTorch models end: wide 1x1 conv, ReLU6, global average pooling
    over 7x7 (49 elements, the case of MobileNetV2 224), linear."""
    return nn.Sequential(conv_bn(16, 256, 1, activation=nn.ReLU6), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(256, 10))


def audio_conv1d() -> nn.Module:
    """A keyword-spotting style 1-D network over 40 MFCC features x 49 frames, ending in
    logits: litert-torch leaves a final softmax in float32 after a DEQUANTIZE, and float
    exp on a Cortex-M4 (newlib) is not the host's, so an int8 model stays int8 to the end."""
    def block(inputs, outputs, stride):
        return [nn.Conv1d(inputs, inputs, 5, stride, 2, groups=inputs), nn.BatchNorm1d(inputs),
                nn.ReLU(), nn.Conv1d(inputs, outputs, 1), nn.BatchNorm1d(outputs), nn.ReLU()]
    return nn.Sequential(nn.Conv1d(40, 32, 3, padding=1), nn.ReLU(), *block(32, 48, 2),
                         *block(48, 64, 2), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                         nn.Linear(64, 12))


def randomize_batch_norm(model: nn.Module, generator: torch.Generator) -> None:
    """Random running statistics and affine parameters, so folded batch norms are not the
    identity they are at initialisation."""
    for module in model.modules():
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            size = module.num_features
            module.running_mean.copy_(0.1 * torch.randn(size, generator=generator))
            module.running_var.copy_(0.5 + torch.rand(size, generator=generator))
            module.weight.data.copy_(0.75 + 0.5 * torch.rand(size, generator=generator))
            module.bias.data.copy_(0.1 * torch.randn(size, generator=generator))


# name: (constructor, input shape NCHW / NLC as PyTorch takes it)
ARCHITECTURES = {
    "squeezenet": (squeezenet, (1, 3, 48, 48)),
    "shufflenetv2": (ShuffleNetV2, (1, 3, 48, 48)),
    "mobilenetv3": (mobilenetv3, (1, 3, 48, 48)),
    "efficientnet": (efficientnet, (1, 3, 48, 48)),
    "resnet": (resnet, (1, 3, 48, 48)),
    "global_pool": (global_pool_head, (1, 16, 7, 7)),
    "audio_conv1d": (audio_conv1d, (1, 40, 49)),
    "transformer": (EncoderBlock, (1, 16, 32)),
    "transformer_relu": (lambda: EncoderBlock(activation=nn.ReLU), (1, 16, 32)),
    # 8 steps: the converters unroll the sequence and concatenate every step's output, and
    # TFLM's CONCATENATION takes at most 10 inputs.
    "gru": (lambda: Recurrent(nn.GRU), (1, 8, 8)),
    "lstm": (lambda: Recurrent(nn.LSTM), (1, 8, 8)),
    "unet": (UNet, (1, 1, 32, 32)),
}


def build(name: str, seed: int) -> tuple[nn.Module, tuple[int, ...]]:
    """The architecture with seeded random weights, in eval mode."""
    constructor, shape = ARCHITECTURES[name]
    torch.manual_seed(seed)
    model = constructor()
    with torch.no_grad():
        randomize_batch_norm(model, torch.Generator().manual_seed(seed))
    return model.eval(), shape
