// Bounded derivative-free minimization for calibration: Nelder & Mead's simplex method
// (Computer Journal 7, 1965) with the standard coefficients (reflection 1, expansion 2,
// contraction 1/2, shrink 1/2; Lagarias et al., SIAM J. Optim. 9, 1998), run on
// unconstrained coordinates u mapped onto the box by x = lo + (hi - lo) (1 + sin u) / 2
// (Box 1965 / Park 1975: every u is feasible and the bounds are reachable), and restarted
// from the best vertex with a fresh simplex until a restart no longer improves (the usual
// guard against a collapsed simplex).
#pragma once

#include <functional>
#include <vector>

namespace rapid {

struct MinimizeOptions {
  int max_evaluations = 20000;  ///< over all restarts
  int max_restarts = 8;
  double f_tolerance = 1e-12;  ///< stop when the simplex's values spread less than this
  double u_tolerance = 1e-9;   ///< ... and its vertices lie this close (mapped coordinates)
  double initial_step = 0.4;   ///< simplex edge in mapped coordinates (radians)
};

struct MinimizeResult {
  std::vector<double> x;  ///< best point found, inside [lower, upper]
  double value = 0;       ///< objective at x
  int evaluations = 0;
};

/// Minimizes `f` over the box [lower, upper] starting from `x0` (clamped into the box).
/// A coordinate with lower == upper stays fixed. Requires lower <= upper and equal sizes
/// (InternalError otherwise). `f` must be finite on the box.
MinimizeResult minimize_bounded(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, const std::vector<double>& lower,
                                const std::vector<double>& upper, const MinimizeOptions& opt = {});

}  // namespace rapid
