#!/usr/bin/python3
"""`rapid launch` on a training job for each stack, parsed the way the stack parses it
(docs/launch.md): Megatron-LM's flags with argparse declaring exactly the cited flag names
(megatron/training/arguments.py: types int/str, store_true switches), NeMo's key=value
overrides against the cited dotted paths, torchtitan's --section.key overrides with
argparse (torchtitan/config/job_config.py). An unknown or misspelled name, a missing value
or a value of the wrong type fails. Also checks the layouts against the stacks' own rules
quoted in docs/launch.md, and the two exit-2 paths (an unknown stack, a serving job).

    check_launch_syntax.py RAPID TRAINING_JOB SERVING_JOB
"""
import argparse
import re
import shlex
import subprocess
import sys

ERRORS = []


def fail(msg):
    ERRORS.append(msg)


class Refused(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting (an unknown flag, a bad type)."""

    def error(self, message):
        raise Refused(message)


def launch(rapid, job, stack, *extra):
    proc = subprocess.run([rapid, "launch", job, "--stack", stack, *extra], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        fail(f"launch --stack {stack} {' '.join(extra)}: exit {proc.returncode}: {proc.stderr}")
        return [], []
    comments = [l for l in proc.stdout.splitlines() if l.startswith("#")]
    body = "\n".join(l for l in proc.stdout.splitlines() if not l.startswith("#"))
    if not comments or not comments[0].startswith(f"# rapid launch --stack {stack}: "):
        fail(f"{stack}: first line {comments[:1]}")
    if len(comments) < 2 or not comments[1].startswith("# layout dp"):
        fail(f"{stack}: no '# layout' line: {comments[:2]}")
    return comments, shlex.split(body.replace("\\\n", " "))


def split_env(tokens):
    env = {}
    while tokens and re.fullmatch(r"[A-Z_]+=\S+", tokens[0]):
        k, v = tokens.pop(0).split("=", 1)
        env[k] = v
    return env


def torchrun_args(tokens, program):
    """torchrun's own options up to `program` (a script, or -m MODULE)."""
    assert tokens.pop(0) == "torchrun", tokens
    end = tokens.index(program)
    p = Parser(allow_abbrev=False)
    for name in ("--nproc_per_node", "--nnodes", "--node_rank"):
        p.add_argument(name, type=str)
    p.add_argument("--master_addr")
    p.add_argument("--master_port")
    ns = p.parse_args(tokens[:end])
    del tokens[:end + 1]
    return ns


MEGATRON_INT = """num-layers hidden-size ffn-hidden-size num-attention-heads num-query-groups
    kv-channels seq-length max-position-embeddings tensor-model-parallel-size
    pipeline-model-parallel-size num-layers-per-virtual-pipeline-stage
    num-virtual-stages-per-pipeline-rank context-parallel-size expert-model-parallel-size
    expert-tensor-parallel-size micro-batch-size global-batch-size recompute-num-layers
    num-experts moe-ffn-hidden-size moe-router-topk moe-shared-expert-intermediate-size
    cpu-offloading-num-layers q-lora-rank kv-lora-rank qk-head-dim qk-pos-emb-head-dim
    v-head-dim""".split()
MEGATRON_CHOICES = {
    "position-embedding-type": ["learned_absolute", "rope", "mrope", "relative", "none"],
    "normalization": ["LayerNorm", "RMSNorm"],
    "recompute-granularity": ["full", "selective"],
    "recompute-method": ["uniform", "block"],
    "data-parallel-sharding-strategy": ["no_shard", "optim", "optim_grads", "optim_grads_params"],
}
MEGATRON_STR = ["ckpt-format", "moe-layer-freq"]
MEGATRON_SWITCHES = """sequence-parallel use-distributed-optimizer group-query-attention swiglu
    untie-embeddings-and-output-weights multi-latent-attention use-megatron-fsdp""".split()


def check_megatron(tokens, want_vstage=None):
    env = split_env(tokens)
    run = torchrun_args(tokens, "pretrain_gpt.py")
    p = Parser(allow_abbrev=False)
    for f in MEGATRON_INT:
        p.add_argument("--" + f, type=int)
    for f, choices in MEGATRON_CHOICES.items():
        p.add_argument("--" + f, type=str, choices=choices)
    for f in MEGATRON_STR:
        p.add_argument("--" + f, type=str)
    for f in MEGATRON_SWITCHES:
        p.add_argument("--" + f, action="store_true")
    a = p.parse_args(tokens)
    world = int(run.nproc_per_node) * int(run.nnodes)
    model = a.tensor_model_parallel_size * a.pipeline_model_parallel_size * a.context_parallel_size
    # validate_args: world % (tp pp cp) == 0, dp = world / (tp pp cp); layers divisible by pp.
    if world % model:
        fail(f"megatron: world {world} not divisible by tp*pp*cp {model}")
    dp = world // model
    if a.global_batch_size % (a.micro_batch_size * dp):
        fail(f"megatron: gbs {a.global_batch_size} not a multiple of mbs*dp")
    stage = a.num_layers // a.pipeline_model_parallel_size
    if a.num_layers % a.pipeline_model_parallel_size:
        fail("megatron: layers not divisible by pp")
    v = a.num_layers_per_virtual_pipeline_stage
    if v is not None and stage % v:
        fail(f"megatron: {stage} layers per stage not divisible by {v} per virtual stage")
    if want_vstage is not None and v != want_vstage:
        fail(f"megatron: --num-layers-per-virtual-pipeline-stage {v}, expected {want_vstage}")
    if a.recompute_granularity == "selective" and a.recompute_method is not None:
        fail("megatron: --recompute-method with selective granularity")
    if a.sequence_parallel and a.tensor_model_parallel_size == 1:
        fail("megatron: --sequence-parallel with TP 1")
    needs_one = (a.tensor_model_parallel_size > 1 or a.context_parallel_size > 1)
    if needs_one and not a.use_megatron_fsdp and env.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1":
        fail("megatron: TP/CP > 1 without CUDA_DEVICE_MAX_CONNECTIONS=1")
    return a


INT, BOOL = r"\d+", r"True|False"
NEMO_KEYS = {
    r"trainer\.(num_nodes|devices)": INT,
    r"trainer\.strategy\.(tensor|pipeline|context|expert|expert_tensor)_(model_)?parallel_size":
        INT,
    r"trainer\.strategy\.virtual_pipeline_model_parallel_size": INT + "|None",
    r"trainer\.strategy\.sequence_parallel": BOOL,
    r"trainer\.strategy\.fsdp": r"megatron",
    r"trainer\.strategy\.ddp\.data_parallel_sharding_strategy": r"optim_grads|optim_grads_params",
    r"data\.(micro_batch_size|global_batch_size|seq_length)": INT,
    r"model\.config\.recompute_granularity": r"full|selective|None",
    r"model\.config\.recompute_method": r"uniform|block",
    r"model\.config\.recompute_num_layers": INT,
    r"model\.config\.(init_model_with_meta_device|gradient_accumulation_fusion)": BOOL,
    r"optim\.config\.use_distributed_optimizer": BOOL,
}


def check_nemo(tokens):
    if tokens[:4] != ["nemo", "llm", "pretrain", "--factory"] or tokens[-1] != "-y":
        fail(f"nemo: not `nemo llm pretrain --factory RECIPE ... -y`: {tokens[:5]} {tokens[-1:]}")
        return {}
    if not re.fullmatch(r"[a-z0-9_]+", tokens[4]):
        fail(f"nemo: recipe {tokens[4]!r}")
    values = {}
    for t in tokens[5:-1]:
        key, _, value = t.partition("=")
        rule = next((v for k, v in NEMO_KEYS.items() if re.fullmatch(k, key)), None)
        if rule is None:
            fail(f"nemo: {key!r} is not a cited path")
        elif not re.fullmatch(rule, value):
            fail(f"nemo: {key}={value!r} does not match {rule}")
        if key in values:
            fail(f"nemo: {key} twice")
        values[key] = value
    return values


TITAN_INT = """data_parallel_replicate_degree data_parallel_shard_degree tensor_parallel_degree
    pipeline_parallel_degree pipeline_parallel_microbatch_size context_parallel_degree
    expert_parallel_degree""".split()


def check_torchtitan(tokens):
    env = split_env(tokens)
    if tokens and tokens[0] == "./run_train.sh":
        world = int(env["NGPU"])
        if "CONFIG_FILE" not in env:
            fail("torchtitan: run_train.sh without CONFIG_FILE")
        tokens.pop(0)
    else:
        run = torchrun_args(tokens, "-m")
        if tokens.pop(0) != "torchtitan.train":
            fail("torchtitan: torchrun without -m torchtitan.train")
        world = int(run.nproc_per_node) * int(run.nnodes)
    p = Parser(allow_abbrev=False)
    p.add_argument("--job.config_file", type=str)
    for f in TITAN_INT:
        p.add_argument("--parallelism." + f, type=int)
    p.add_argument("--parallelism.pipeline_parallel_schedule", type=str,
                   choices=["1F1B", "Interleaved1F1B"])
    p.add_argument("--parallelism.pipeline_parallel_split_points", type=str)
    for f in ("local_batch_size", "global_batch_size", "seq_len"):
        p.add_argument("--training." + f, type=int)
    p.add_argument("--activation_checkpoint.mode", choices=["selective", "full", "none"])
    p.add_argument("--activation_checkpoint.selective_ac_option", type=str)
    a = vars(p.parse_args(tokens))
    g = lambda k: a["parallelism." + k]
    product = (g("data_parallel_replicate_degree") * g("data_parallel_shard_degree") *
               g("context_parallel_degree") * g("tensor_parallel_degree") *
               g("pipeline_parallel_degree"))
    if product != world:
        fail(f"torchtitan: dp_replicate*dp_shard*cp*tp*pp = {product}, {world} GPUs")
    points = a["parallelism.pipeline_parallel_split_points"]
    if points is not None:
        names = points.split(",")
        if not all(re.fullmatch(r"layers\.\d+", n) for n in names):
            fail(f"torchtitan: split points {points}")
        stages = len(names) + 1
        pp = g("pipeline_parallel_degree")
        looped = a["parallelism.pipeline_parallel_schedule"] == "Interleaved1F1B"
        if stages % pp or looped != (stages > pp):
            fail(f"torchtitan: {stages} stages on pp {pp} with {looped=}")
    option = a["activation_checkpoint.selective_ac_option"]
    if option is not None and not re.fullmatch(r"op|\d+", option):
        fail(f"torchtitan: selective_ac_option {option}")
    return a


def expect_exit_2(rapid, args, words):
    proc = subprocess.run([rapid, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 2 or proc.stdout or not all(w in proc.stderr for w in words):
        fail(f"{' '.join(args)}: exit {proc.returncode}, stderr {proc.stderr!r}, want {words}")


def main():
    rapid, job, serving = sys.argv[1:4]
    checks = [("megatron", check_megatron), ("nemo", check_nemo),
              ("torchtitan", check_torchtitan)]
    for stack, check in checks:
        for extra in ([], ["--tp", "4", "--pp", "8", "--vpp", "2", "--zero", "3",
                           "--recompute", "full", "--recompute-method", "block",
                           "--recompute-num-layers", "2"]):
            comments, tokens = launch(rapid, job, stack, *extra)
            if not tokens:
                continue
            try:
                if check is check_megatron:
                    check(tokens, want_vstage=5 if extra else None)  # 80 / (8 * 2)
                else:
                    check(tokens)
            except (Refused, ValueError, KeyError) as e:
                fail(f"{stack} {' '.join(extra)}: {e}")
            print(f"{stack} {' '.join(extra) or '(the job layout)'}: {len(tokens)} tokens, "
                  f"{sum(c.startswith('# warning') for c in comments)} warning(s)")
    # The syntax check itself refuses a misspelled flag.
    try:
        check_megatron(["torchrun", "--nproc_per_node", "8", "--nnodes", "1", "pretrain_gpt.py",
                        "--tensor-model-paralel-size", "8"])
        fail("the Megatron parser took a misspelled flag")
    except Refused:
        pass
    expect_exit_2(rapid, ["launch", job, "--stack", "deepspeed"],
                  ["--stack", "deepspeed", "megatron, nemo or torchtitan"])
    expect_exit_2(rapid, ["launch", serving, "--stack", "megatron"], ["mode", "inference"])
    for e in ERRORS:
        print("FAIL:", e)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
