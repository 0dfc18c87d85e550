"""ctest scripts_torch_export: runs scripts/torch_export.py on the hand-written models of
torch_export_models.py and checks the graphs against hand-computed vertices, bytes, costs and
edges; the built tool reads and orders them (peaks worked out by hand); views and in-place ops are
not counted twice; the aten level agrees with the module level; --training, --profile and every
error. Run by torch_export.sh with a python3 that has torch.
  python3 torch_export_test.py MEMSCHED_TOOL SOURCE_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

tool, root = sys.argv[1], sys.argv[2]
exporter = os.path.join(root, "scripts", "torch_export.py")
models = os.path.join(root, "tests", "scripts", "torch_export_models.py")
work = tempfile.mkdtemp()
passed = 0
failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"FAILED: {name} {detail}")


def export(model, *args, env=None):
    """Runs the exporter; returns (status, stderr, graph or None)."""
    out = os.path.join(work, f"{model.replace(':', '_').replace('/', '_')}_{len(os.listdir(work))}.json")
    spec = model if "." in model.split(":")[0] else f"{models}:{model}"
    done = subprocess.run([sys.executable, exporter, spec, "--out", out, *args], capture_output=True, text=True, env=env)
    graph = None
    if done.returncode == 0 and os.path.exists(out):
        with open(out) as f:
            graph = json.load(f)
        graph["_path"] = out
    return done.returncode, done.stderr, graph


def rows(graph):
    return [(n["name"], n["op"], n["bytes"], n["cost"]) for n in graph["nodes"]]


def edges(graph):
    return sorted(tuple(e) for e in graph["edges"])


def total(graph):
    return sum(n["bytes"] for n in graph["nodes"])


def tool_json(*args):
    done = subprocess.run([tool, *args], capture_output=True, text=True)
    if done.returncode != 0:
        return {"_error": done.stderr.strip()}
    return json.loads(done.stdout)


# Residual, module level: every value is a new tensor; flatten is a view (no vertex).
status, err, res = export("Residual", "--input-shape", "1,3,8,8")
check("Residual exports", status == 0 and res is not None, err)
if res:
    check("Residual vertices", rows(res) == [("x", "input", 768, 0), ("conv", "conv2d", 1024, 13824),
                                             ("relu", "relu", 1024, 256), ("skip", "conv2d", 1024, 1536),
                                             ("add", "add", 1024, 256)], rows(res))
    check("Residual edges", edges(res) == [(0, 1), (0, 3), (1, 2), (2, 4), (3, 4)], edges(res))
    check("Residual outputs (flatten's base)", res["outputs"] == [4], res["outputs"])

# The same with an in-place relu and add_: they own no memory, and readers keep the conv's buffer.
status, err, inp = export("ResidualInplace", "--input-shape", "1,3,8,8")
check("ResidualInplace exports", status == 0 and inp is not None, err)
if inp:
    check("in-place bytes 0", [n["bytes"] for n in inp["nodes"]] == [768, 1024, 0, 1024, 0], rows(inp))
    check("in-place not counted twice", total(inp) == 4864 - 2 * 1024, total(inp))
    # add_ reads the conv's buffer (1 -> 4) after relu_ wrote it (2 -> 4).
    check("in-place edges", edges(inp) == [(0, 1), (0, 3), (1, 2), (1, 4), (2, 4), (3, 4)], edges(inp))
    check("in-place output is the buffer's owner", inp["outputs"] == [1], inp["outputs"])

status, err, mlp = export("MLP", "--input-shape", "2,16")
check("MLP exports", status == 0 and mlp is not None, err)
if mlp:
    check("MLP vertices", rows(mlp) == [("x", "input", 128, 0), ("fc1", "linear", 256, 2048),
                                        ("relu", "relu", 256, 64), ("fc2", "linear", 64, 1024)], rows(mlp))
    check("MLP edges", edges(mlp) == [(0, 1), (1, 2), (2, 3)], edges(mlp))

status, err, two = export("TwoInputs", "--input-shape", "2,3", "--input-shape", "3,5")
check("TwoInputs exports", status == 0 and two is not None, err)
if two:
    check("TwoInputs vertices", rows(two) == [("a", "input", 24, 0), ("b", "input", 60, 0), ("matmul", "matmul", 40, 60)], rows(two))
    check("TwoInputs inputs/outputs", two["inputs"] == [0, 1] and two["outputs"] == [2], (two["inputs"], two["outputs"]))

status, err, emb = export("Embed", "--input-shape", "2,5:int64")
check("Embed exports", status == 0 and emb is not None, err)
if emb:
    check("Embed vertices (int64 ids)", rows(emb) == [("ids", "input", 80, 0), ("emb", "embedding", 240, 60), ("mean", "mean", 48, 12)], rows(emb))
    check("Embed dtypes recorded", emb.get("input_dtypes") == ["int64"], emb.get("input_dtypes"))

# Aten level: single-op modules give the same vertices and bytes; an LSTM cell opens up.
for model, shape, module_graph in (("Residual", "1,3,8,8", res), ("ResidualInplace", "1,3,8,8", inp), ("MLP", "2,16", mlp)):
    status, err, aten = export(model, "--input-shape", shape, "--level", "aten")
    check(f"{model} aten exports", status == 0 and aten is not None, err)
    if aten and module_graph:
        check(f"{model} aten bytes = module bytes", [n["bytes"] for n in aten["nodes"]] == [n["bytes"] for n in module_graph["nodes"]],
              (rows(aten), rows(module_graph)))
        check(f"{model} aten costs = module costs", [n["cost"] for n in aten["nodes"]] == [n["cost"] for n in module_graph["nodes"]])
        check(f"{model} aten edges = module edges", edges(aten) == edges(module_graph), edges(aten))
status, err, hidden = export("HiddenWork", "--input-shape", "2,4")
status_a, err_a, hidden_a = export("HiddenWork", "--input-shape", "2,4", "--level", "aten")
check("HiddenWork exports", hidden is not None and hidden_a is not None, err + err_a)
if hidden and hidden_a:
    check("HiddenWork module: one vertex for the cell (h and c: 2 x 2 x 8 x 4 bytes)",
          rows(hidden) == [("x", "input", 32, 0), ("cell", "lstmcell", 128, 32)], rows(hidden))
    check("HiddenWork aten has more vertices", len(hidden_a["nodes"]) > 2 * len(hidden["nodes"]), len(hidden_a["nodes"]))
    out_bytes = sum(hidden_a["nodes"][v]["bytes"] for v in hidden_a["outputs"])
    check("HiddenWork aten outputs hold h and c (128 bytes)", out_bytes == 128, out_bytes)
    check("HiddenWork aten: every edge forward in the trace order", all(u < v for u, v in hidden_a["edges"]))

# A fused inference kernel stays one op under no_grad; --autograd opens it (attention: bmm, softmax).
status, err, fused = export("Encoder", "--input-shape", "2,16,32", "--level", "aten")
status_g, err_g, opened = export("Encoder", "--input-shape", "2,16,32", "--level", "aten", "--autograd")
check("Encoder exports", fused is not None and opened is not None, err + err_g)
if fused and opened:
    check("Encoder fused: one op", len(fused["nodes"]) == 2, rows(fused))
    ops = [n["op"] for n in opened["nodes"]]
    check("Encoder --autograd: attention ops", ops.count("bmm") == 2 and ops.count("softmax") == 1 and ops.count("layernorm") == 2, ops)
    out_bytes = [sum(g["nodes"][v]["bytes"] for v in g["outputs"]) for g in (fused, opened)]
    check("Encoder output bytes (2 x 16 x 32 floats)", out_bytes == [4096, 4096], out_bytes)
    # native_layer_norm also allocates its mean and rstd (2 x 16 floats each), which no node reads:
    # workspace, freed as the op returns, not bytes held as long as the output.
    norms = [(n["bytes"], n.get("workspace", 0)) for n in opened["nodes"] if n["op"] == "layernorm"]
    check("Encoder --autograd: layer norms' unread statistics are workspace", norms == [(4096, 256)] * 2, norms)

# The tool reads the exports; orders' peaks by hand: Residual 3072 (relu, skip and add together),
# in place 2816 (x, conv's buffer, skip), MLP 512 (fc1 and relu).
for graph, peak in ((res, 3072), (inp, 2816), (mlp, 256 + 256)):
    if not graph:
        continue
    info = tool_json("info", graph["_path"], "--json")
    check(f"info reads {graph['name']}", "_error" not in info, info)
    if "_error" not in info:
        check(f"info {graph['name']} counts", (info.get("nodes"), info.get("edges"), info.get("total_bytes"))
              == (len(graph["nodes"]), len(graph["edges"]), total(graph)), info)
        check(f"info {graph['name']} Kahn peak", info.get("baselines", {}).get("kahn") == peak, info)
    for algo in ("kahn", "serenity"):
        order = tool_json("order", graph["_path"], "--algo", algo, "--json")
        got = order.get("peak_bytes", order.get("peak"))
        check(f"{algo} peak of {graph['name']}", got == peak, order)

# --training through the tool: forward 5 + loss + 4 gradients (inputs get none).
status, err, train = export("Residual", "--input-shape", "1,3,8,8", "--training", "--memsched", tool)
check("Residual --training exports", status == 0 and train is not None, err)
if train:
    check("training graph", train.get("kind") == "training" and len(train["nodes"]) == 10, (train.get("kind"), len(train["nodes"])))
    check("training graph has the forward vertices", rows(train)[:5] == rows(res) if res else False, rows(train)[:5])
# In place: the forward vertices own no memory, their gradients are new tensors of the output's size.
status, err, train_inp = export("ResidualInplace", "--input-shape", "1,3,8,8", "--training", "--memsched", tool)
check("ResidualInplace --training exports", status == 0 and train_inp is not None, err)
if train_inp:
    grads = {n["grad_of"]: n["bytes"] for n in train_inp["nodes"] if n.get("grad_of") is not None}
    check("in-place gradients have the tensor's bytes", grads == {1: 1024, 2: 1024, 3: 1024, 4: 1024}, grads)
    check("in-place forward bytes stay 0", [n["bytes"] for n in train_inp["nodes"][:5]] == [768, 1024, 0, 1024, 0])
env = {k: v for k, v in os.environ.items() if k != "MEMSCHED"}
env["PATH"] = "/nonexistent"
status, err, fwd = export("Residual", "--input-shape", "1,3,8,8", "--training", env=env)
check("--training without a tool writes the forward graph and says how", status == 0 and fwd is not None
      and fwd["kind"] == "inference" and "memsched train" in err, err)

# --profile: measured seconds, same memory.
status, err, prof = export("Residual", "--input-shape", "1,3,8,8", "--profile", "--profile-runs", "3")
check("--profile exports", status == 0 and prof is not None, err)
if prof and res:
    check("--profile same bytes and edges", [n["bytes"] for n in prof["nodes"]] == [n["bytes"] for n in res["nodes"]] and edges(prof) == edges(res))
    costs = [n["cost"] for n in prof["nodes"]]
    check("--profile costs are times", costs[0] == 0 and all(isinstance(c, float) and 0 < c < 10 for c in costs[1:])
          and "seconds" in prof["cost_unit"], costs)

# Errors: one line, exit 2 for bad arguments, 1 for a model that fails.
for args, code, text in (
    (["no_such_module_xyz.Net", "--input-shape", "1,3"], 2, "unknown module spec"),
    ([f"{models}:Missing", "--input-shape", "1,3"], 2, "has no 'Missing'"),
    ([f"{root}/no_such_file.py:Net", "--input-shape", "1,3"], 2, "no file"),
    ([f"{models}:not_a_module", "--input-shape", "1,3"], 2, "not an nn.Module"),
    ([f"{models}:Untraceable", "--input-shape", "1,3"], 1, "cannot trace"),
    ([f"{models}:MLP", "--input-shape", "1,x"], 2, "bad --input-shape '1,x'"),
    ([f"{models}:MLP", "--input-shape", "0,16"], 2, "bad --input-shape '0,16'"),
    ([f"{models}:MLP", "--input-shape", "2,16:int7"], 2, "unknown dtype 'int7'"),
    ([f"{models}:MLP", "--input-shape", "1,3,8,8"], 1, "failed to run"),
):
    done = subprocess.run([sys.executable, exporter, *args, "--out", os.path.join(work, "err.json")], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    check(f"error {text}", done.returncode == code and len(lines) == 1 and text in lines[0] and lines[0].startswith("torch_export: "),
          (done.returncode, done.stderr))

# torchvision's resnet18 against the bundled export (same vertices and bytes, but torchvision's
# relus are in place: 0 bytes here, their own buffer in the bundled file).
try:
    import torchvision  # noqa: F401
    have_vision = True
except ImportError:
    have_vision = False
    print("note: python3-torchvision is not installed: the resnet18 check is skipped")
if have_vision:
    status, err, r18 = export("torchvision.models.resnet18", "--input-shape", "1,3,224,224")
    check("resnet18 exports", status == 0 and r18 is not None, err)
    with open(os.path.join(root, "tests", "data", "torch", "resnet18.inference.json")) as f:
        bundled = json.load(f)
    if r18:
        same = [(a["name"], a["op"]) == (b["name"], b["op"]) for a, b in zip(r18["nodes"], bundled["nodes"])]
        check("resnet18 vertices = bundled", len(r18["nodes"]) == len(bundled["nodes"]) == 69 and all(same))
        check("resnet18 bytes = bundled except in-place relus",
              all(a["bytes"] == (0 if a["op"] == "relu" else b["bytes"]) for a, b in zip(r18["nodes"], bundled["nodes"])))
        check("resnet18 forward edges include the bundled ones", set(map(tuple, bundled["edges"])) <= set(map(tuple, r18["edges"])))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
