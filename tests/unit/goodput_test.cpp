// Failures at job scale (docs/goodput.md sec 6): job MTBF, checkpoint cost, the Young/Daly
// interval, Daly's expected goodput, the `failures:` mapping and its errors.
#include "rapid/nonideal/goodput.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rapid/common/error.hpp"
#include "test_support.hpp"

namespace rapid {
namespace {

FailureSpec parse(const std::string& yaml) {
  return parse_failures(YAML::Load(yaml), "job.yaml", "nonideal.failures");
}

InputError parse_error(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "job.yaml");
    return e;
  }
  ADD_FAILURE() << "no InputError for " << yaml;
  return InputError("", "", "", "");
}

TEST(Goodput, YoungInterval) {
  // Young 1974: tau = sqrt(2 delta M); delta = 100 s, M = 20,000 s:
  // sqrt(2 x 100 x 20,000) = sqrt(4e6) = 2,000 s.
  EXPECT_DOUBLE_EQ(young_interval_s(100, 20000), 2000.0);
}

TEST(Goodput, DalyInterval) {
  // Daly 2006: delta / (2M) = 100 / 40,000 = 0.0025, sqrt = 0.05;
  // tau = 2,000 (1 + 0.05 / 3 + 0.0025 / 9) - 100 = 2,000 + 33.333 + 0.5556 - 100
  //     = 1,933.889 s.
  EXPECT_NEAR(daly_interval_s(100, 20000), 2000.0 + 100.0 / 3 + 5.0 / 9 - 100, 1e-9);
  EXPECT_NEAR(daly_interval_s(100, 20000), 1933.889, 1e-3);
  // A checkpoint of 2M or more: tau = M.
  EXPECT_DOUBLE_EQ(daly_interval_s(500, 250), 250.0);
}

TEST(Goodput, DalyExpectedGoodput) {
  // T_s / T_w = tau / (M e^{R/M} (e^{(tau + delta)/M} - 1)).
  // M = 1,000 s, tau = 900 s, delta = 100 s, R = 0: (tau + delta) / M = 1, so
  // 900 / (1,000 (e - 1)) = 0.9 / 1.718282 = 0.523779.
  EXPECT_NEAR(daly_goodput(900, 100, 0, 1000), 0.9 / (std::exp(1.0) - 1), 1e-12);
  EXPECT_NEAR(daly_goodput(900, 100, 0, 1000), 0.523779, 1e-6);
  // R = M ln 2 = 693.147 s: e^{R/M} = 2 halves it to 0.261890.
  EXPECT_NEAR(daly_goodput(900, 100, 1000 * std::log(2.0), 1000), 0.45 / (std::exp(1.0) - 1),
              1e-12);
  // No failures: all of the time is useful.
  EXPECT_EQ(daly_goodput(900, 100, 600, INFINITY), 1.0);
  // A free checkpoint, tau -> 0: only the restarts cost, e^{-R/M} = e^{-0.5}.
  EXPECT_NEAR(daly_goodput(0, 0, 500, 1000), std::exp(-0.5), 1e-12);
}

TEST(Goodput, JobMtbfOfLlama3DefaultsAt16kGpus) {
  // The defaults are Table 5's 419 unexpected interruptions (all 18 root causes; the 47
  // planned ones of the snapshot left out) over 54 days = 1,296 h on 16,384 GPUs, 2,048
  // nodes of 8: the job MTBF is 1,296 h / 419 = 3.0931 h = 11,135.1 s.
  const FailureSpec f = parse("{}");
  EXPECT_TRUE(f.enabled);
  EXPECT_NEAR(job_mtbf_s(f, 16384, 8) / 3600, 1296.0 / 419, 1e-9);
  EXPECT_NEAR(job_mtbf_s(f, 16384, 8) / 3600, 3.0931, 1e-4);
  // Half the GPUs and nodes: half the rate, twice the MTBF (6.186 h).
  EXPECT_NEAR(job_mtbf_s(f, 8192, 8) / 3600, 2 * 1296.0 / 419, 1e-9);
}

TEST(Goodput, JobMtbfSumsComponentRates) {
  // 16 GPUs in ceil(16 / 8) = 2 nodes, 16 NICs:
  // per hour 16 (0.001 + 0.002) + 16 x 0.003 + 2 x 0.01 = 0.048 + 0.048 + 0.02 = 0.116,
  // M = 3,600 / 0.116 = 31,034.48 s. 12 GPUs still take 2 nodes:
  // 12 x 0.003 + 12 x 0.003 + 2 x 0.01 = 0.092, M = 39,130.43 s.
  const FailureSpec f =
      parse("{gpu_per_hour: 0.001, hbm_per_hour: 0.002, nic_per_hour: 0.003, host_per_hour: 0.01}");
  EXPECT_NEAR(job_mtbf_s(f, 16, 8), 3600 / 0.116, 1e-6);
  EXPECT_NEAR(job_mtbf_s(f, 12, 8), 3600 / 0.092, 1e-6);
  const FailureSpec none =
      parse("{gpu_per_hour: 0, hbm_per_hour: 0, nic_per_hour: 0, host_per_hour: 0}");
  EXPECT_TRUE(std::isinf(job_mtbf_s(none, 16, 8)));
}

class GoodputCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    spec = test::spec_with("llama3-8b", "h100-sxm5-80gb", "dgx-h100-superpod", 64, 4096);
    f = parse("{checkpoint_write: 1GB/s, restart: 10min}");
  }
  EvalResult row(ParallelConfig par, double tokens_per_s) {
    Workload w;
    build_workload_layout(spec.model, spec.training, spec.network, par, w);
    EvalResult r;
    r.tokens_per_s = tokens_per_s;
    fill_goodput(f, spec.model, spec.training, w, spec.network.gpus_per_node, r);
    return r;
  }
  SweepSpec spec;
  FailureSpec f;
};

TEST_F(GoodputCheckpoint, BytesAndWriteTime) {
  // Llama 3 8B (h 4096, a 32, g 8, d 128, f 14336, V 128256, 32 layers, untied):
  // layer = QKV 4096 (32 + 16) 128 + out 32 x 128 x 4096 + MLP 3 x 4096 x 14336 + norms 2 x
  // 4096 = 25,165,824 + 16,777,216 + 176,160,768 + 8,192 = 218,112,000;
  // 32 layers 6,979,584,000 + embedding and head 2 x 128256 x 4096 + final norm 4096
  // = 1,050,677,248: 8,030,261,248 parameters; x (2 + 12) B = 112,423,657,472 B.
  EXPECT_EQ(spec.model.total_params(), 8030261248);
  EXPECT_EQ(spec.training.optimizer_bytes, 12);
  ParallelConfig par;
  par.tp = 8;
  par.dp = 4;  // 32 GPUs, 4 nodes
  par.zero_stage = 1;
  EvalResult r = row(par, 1e5);
  EXPECT_DOUBLE_EQ(r.checkpoint_bytes, 112423657472.0);
  // ZeRO-1: all 4 nodes write at 1 GB/s each: 112.42 GB / 4 GB/s = 28.106 s.
  EXPECT_NEAR(r.checkpoint_write_s, 112423657472.0 / 4e9, 1e-9);
  // ZeRO-0: only DP rank 0's replica, one node (tp 8): 112.42 s.
  par.zero_stage = 0;
  EXPECT_NEAR(row(par, 1e5).checkpoint_write_s, 112423657472.0 / 1e9, 1e-9);
  // ZeRO-0 with tp 8, pp 2, dp 2 (4 nodes): the replica's two stages on two nodes, 56.21 s.
  par.pp = 2;
  par.dp = 2;
  EXPECT_NEAR(row(par, 1e5).checkpoint_write_s, 112423657472.0 / 2e9, 1e-9);
}

TEST_F(GoodputCheckpoint, FillsTheColumnsOfOkRowsOnly) {
  ParallelConfig par;
  par.tp = 8;
  par.dp = 4;
  par.zero_stage = 1;
  EvalResult r = row(par, 1e5);
  // 32 GPUs, 4 nodes at the defaults: M = 1,296 h / (419 x 32 / 16,384) = 3.0931 h x 512.
  EXPECT_NEAR(r.job_mtbf_s, 1296.0 * 3600 / 419 * 512, 1e-3);
  EXPECT_NEAR(r.checkpoint_interval_s, daly_interval_s(r.checkpoint_write_s, r.job_mtbf_s), 1e-9);
  EXPECT_NEAR(r.goodput,
              daly_goodput(r.checkpoint_interval_s, r.checkpoint_write_s, 600, r.job_mtbf_s),
              1e-15);
  // Goodput above 1 - delta/tau - tau/(2M) - R/M (first-order terms of Daly's T_w):
  // delta = 28.1 s, M = 5.70e6 s: tau ~ sqrt(2 delta M) = 17,900 s, so the loss is about
  // 0.0016 + 0.0016 + 0.0001.
  EXPECT_GT(r.goodput, 0.996);
  EXPECT_LT(r.goodput, 0.997);
  EXPECT_DOUBLE_EQ(r.goodput_tokens_per_s, 1e5 * r.goodput);

  EvalResult oom;
  oom.status = Status::OutOfMemory;
  Workload w;
  build_workload_layout(spec.model, spec.training, spec.network, par, w);
  fill_goodput(f, spec.model, spec.training, w, 8, oom);
  EXPECT_TRUE(std::isnan(oom.goodput));
  FailureSpec off = parse("{enabled: false}");
  EvalResult ideal;
  fill_goodput(off, spec.model, spec.training, w, 8, ideal);
  EXPECT_TRUE(std::isnan(ideal.job_mtbf_s));
}

TEST(Goodput, RankingFlipsFasterOnTwiceTheGpus) {
  // Two layouts of Llama 3 405B (405.85e9 parameters, checkpoint x 14 B = 5.682e12 B) at
  // the Llama 3 rates, 1 GB/s per node, restart R = 600 s:
  //  A: 16,384 GPUs, ZeRO-0 (one replica of tp 8, pp 16 = 16 nodes writes):
  //     M = 11,135.1 s, delta = 5.682e12 / 16e9 = 355.1 s; delta / 2M = 0.01595 (sqrt
  //     0.1263): tau = sqrt(2 x 355.1 x 11,135.1) = 2,812 x (1 + 0.0421 + 0.0018) - 355.1
  //     = 2,580 s; e^{R/M} = e^{0.05388} = 1.0554, e^{(tau + delta)/M} - 1 = e^{0.26362} -
  //     1 = 0.30163: goodput = 2,580 / (11,135.1 x 1.0554 x 0.30163) = 2,580 / 3,545 = 0.728;
  //  B: 8,192 GPUs, ZeRO-1 (all 1,024 nodes write): M = 22,270.2 s, delta = 5.549 s;
  //     tau = 497.1 x 1.00374 - 5.55 = 493.4 s; e^{0.026942} = 1.0273, e^{0.022405} - 1 =
  //     0.022658: goodput = 493.4 / (22,270.2 x 1.0273 x 0.022658) = 493.4 / 518.4 = 0.952.
  // A runs 1.25x the tokens/s of B, but 1.25 x 0.728 = 0.910 < 0.952: B is faster per week.
  // Llama 3 405B shapes (Table 3).
  const ModelSpec model = test::llama_shape(126, 16384, 128, 8, 53248, 128256);
  ASSERT_NEAR(model.total_params() / 1e9, 405.85, 0.01);
  TrainingSpec training;
  const FailureSpec f = parse("{checkpoint_write: 1GB/s, restart: 10min}");
  Workload a, b;
  a.par.tp = b.par.tp = 8;
  a.par.pp = b.par.pp = 16;
  a.par.dp = 128;
  b.par.dp = 64;
  a.par.zero_stage = 0;
  b.par.zero_stage = 1;
  EvalResult ra, rb;
  ra.tokens_per_s = 1.25e6;
  rb.tokens_per_s = 1.0e6;
  fill_goodput(f, model, training, a, 8, ra);
  fill_goodput(f, model, training, b, 8, rb);
  EXPECT_NEAR(ra.checkpoint_write_s, model.total_params() * 14.0 / 16e9, 1e-6);
  EXPECT_NEAR(rb.checkpoint_write_s, model.total_params() * 14.0 / 1024e9, 1e-6);
  EXPECT_GT(ra.tokens_per_s, rb.tokens_per_s);
  EXPECT_NEAR(ra.goodput, 0.728, 1e-3);
  EXPECT_NEAR(rb.goodput, 0.952, 1e-3);
  EXPECT_LT(ra.goodput_tokens_per_s, rb.goodput_tokens_per_s);
}

TEST(FailureSpec, DefaultsAndOverrides) {
  FailureSpec f = parse("{}");
  // Table 5 counts over 54 x 24 = 1,296 h: gpu 196 and hbm 72 per 16,384 GPUs, nic 42 per
  // 16,384 NICs, host 109 per 2,048 nodes; Tectonic's 2 TB/s over 2,048 nodes.
  EXPECT_DOUBLE_EQ(f.gpu_per_hour, 196.0 / (16384 * 1296.0));
  EXPECT_DOUBLE_EQ(f.hbm_per_hour, 72.0 / (16384 * 1296.0));
  EXPECT_DOUBLE_EQ(f.nic_per_hour, 42.0 / (16384 * 1296.0));
  EXPECT_DOUBLE_EQ(f.host_per_hour, 109.0 / (2048 * 1296.0));
  EXPECT_DOUBLE_EQ(f.checkpoint_write_Bps, 2e12 / 2048);
  EXPECT_DOUBLE_EQ(f.restart_s, 600.0);
  f = parse("{gpu_per_hour: 1e-5, checkpoint_write: 2GB/s, restart: 90s}");
  EXPECT_DOUBLE_EQ(f.gpu_per_hour, 1e-5);
  EXPECT_DOUBLE_EQ(f.checkpoint_write_Bps, 2e9);
  EXPECT_DOUBLE_EQ(f.restart_s, 90.0);
  EXPECT_FALSE(parse("{enabled: false}").enabled);
}

TEST(FailureSpec, BadInputNamesKeyAndValue) {
  InputError e = parse_error("{restart: 10 parsecs}");
  EXPECT_EQ(e.key(), "nonideal.failures.restart");
  EXPECT_EQ(e.value(), "10 parsecs");
  e = parse_error("{checkpoint_write: 0GB/s}");
  EXPECT_EQ(e.key(), "nonideal.failures.checkpoint_write");
  EXPECT_EQ(e.value(), "0GB/s");
  EXPECT_NE(e.expected().find("positive"), std::string::npos);
  e = parse_error("{gpu_per_hour: -1}");
  EXPECT_EQ(e.key(), "nonideal.failures.gpu_per_hour");
  EXPECT_EQ(e.value(), "-1");
  e = parse_error("{nic_per_hr: 1e-6}");  // a typo is not silently ignored
  EXPECT_EQ(e.key(), "nonideal.failures.nic_per_hr");
  e = parse_error("{checkpoint_write: 2s}");
  EXPECT_EQ(e.key(), "nonideal.failures.checkpoint_write");
  EXPECT_EQ(e.value(), "2s");
}

}  // namespace
}  // namespace rapid
