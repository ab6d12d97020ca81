import ember as torch
from ember import nn

torch.manual_seed(0)
x = torch.randn(256, 4)
y = (x.sum(1) > 0).long()                       # two classes
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(100):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    print(f"loss {loss.item():.3f}, accuracy {(model(x).argmax(1) == y).float().mean().item():.2f}")
