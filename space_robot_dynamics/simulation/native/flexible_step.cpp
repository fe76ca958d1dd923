// One RKMK4 step of a flexible model (docs/flexibility.md), compiled: the same arithmetic as the Python path
// (integrators.ManifoldRK4.step with Simulator._flexible_rhs, elastic_forces.py and reduced_dynamics.py), which
// stays its test oracle (test/test_compiled_flexible_step.py); docs/flexibility.md sec. 12. Pinocchio (header-only
// use) is the engine: crba + nonLinearEffects for the reduced dynamics of eq. 16, aba for a tree without dependent
// coordinates, integrate and dDifference for the manifold. The Pinocchio model is rebuilt here from a flat description of the Python one
// (joint kinds, parents, placements, inertias, armature, gravity), so this library does not depend on the ABI of
// the Pinocchio the interpreter loaded. A C interface, called through ctypes (compiled_flexible_step.py).
// Pinocchio's joint variant has more alternatives than Boost.MPL's default list size (its own CMake sets these).
#define BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS
#define BOOST_MPL_LIMIT_LIST_SIZE 30
#define BOOST_MPL_LIMIT_VECTOR_SIZE 30
#define BOOST_FUSION_INVOKE_MAX_ARITY 12
#if __has_include(<pinocchio/multibody.hpp>)      // Pinocchio 4
#define SR_PINOCCHIO_4 1
#include <pinocchio/multibody.hpp>
#else                                             // Pinocchio 3
#define SR_PINOCCHIO_4 0
#include <pinocchio/multibody/model.hpp>
#include <pinocchio/multibody/data.hpp>
#endif
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>

#include <string>
#include <vector>

namespace
{
  namespace pin = pinocchio;
  typedef Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> RowMatrix;
  typedef Eigen::Map<const Eigen::VectorXd> ConstVec;
  typedef Eigen::Map<Eigen::VectorXd> Vec;

  // Joint kinds, numbered as compiled_flexible_step.JOINT_KINDS.
  enum Kind { FREE_FLYER = 0, RX, RY, RZ, PX, PY, PZ, RUBX, RUBY, RUBZ, REVOLUTE_UNALIGNED, PRISMATIC_UNALIGNED };

  struct Entry { int row, column; double value; };   // a nonzero of T (nv x nr)
  struct Term { int target, source; double value; };  // reduced_mass[target] += value * M[source] (column-major)

  struct Stepper
  {
    pin::Model model;
    pin::Data * data = nullptr;
    int nq = 0, nv = 0, nr = 0;
    bool reduced = false;              // dependent coordinates: eq. 16 instead of aba
    std::vector<Entry> t_entries;      // T's nonzeros, column-major order
    std::vector<int> parents;          // of each reduced coordinate, -1 at a root (solve_tree_sparse)
    std::vector<int> mass_pattern;     // the entries (k, l), l on k's chain of parents, of T^T M T (column-major)
    std::vector<Term> mass_terms;      // T^T M T on them, from M's upper triangle
    std::vector<int> selected_q, selected_v;
    std::vector<int> dependent_q, dependent_v, source_q, source_v;   // eq. 14's projection
    Eigen::MatrixXd S;
    std::vector<std::pair<int, int>> lie_blocks;   // (idx_v, nv) of the joints whose dexp^-1 is not the identity
    // the caller's buffers (sr_flexible_bind)
    const double * q0_in = nullptr; const double * y0_in = nullptr; const double * tau_in = nullptr;
    double * q_out = nullptr; double * y_out = nullptr; double * dq_out = nullptr;
    std::vector<Term> stiffness, damping_terms;   // K's and C's nonzeros: (row, column, value) on the selected
    Eigen::VectorXd f0;
    bool damped = false;
    // work space
    Eigen::VectorXd tau, x, rate, force, damping, reduced_force;
    Eigen::VectorXd q0, y0, tau_cmd;   // the step's inputs, copied from the bound buffers
    Eigen::MatrixXd Mr;
    Eigen::MatrixXd jac;
    std::vector<Eigen::VectorXd> d, k;   // stage derivatives (ny) and pulled-back velocities (nv)
    Eigen::VectorXd y, xi, q;
    int ny = -1;
    // A held grasp (loop_closure.py, the fast route): Pinocchio's CONTACT_6D constraint in the LOCAL frame of c1
    // with Baumgarte gains, constraintDynamics with mu = 0 and one iteration (the exact KKT solve).
    bool has_loop = false;
    std::vector<pin::RigidConstraintModel> loop_models;
    std::vector<pin::RigidConstraintData> loop_datas;
    pin::ProximalSettings prox{1e-12, 0.0, 1};
    double * force_out = nullptr;               // lambda of each step's first stage (6)
    // External wrenches (external_wrenches.py), constant over the step: one spatial force per joint, LOCAL frame,
    // about the joint origin [f; n]; their power and resultant (force, moment about the world origin, world axes)
    // are the rates of the auxiliary states at external_rate and impulse_rate (-1: absent).
    bool has_fext = false;
    const double * fext_in = nullptr;
    pin::container::aligned_vector<pin::Force> fext;
    std::vector<int> loaded;                    // joints with a nonzero force, ascending
    int external_rate = -1, impulse_rate = -1;
    pin::Data * kinematics = nullptr;           // the resultant's placements at q
    Eigen::VectorXd zero_v, bias;

    ~Stepper() { delete data; delete kinematics; }

    // H x = b in place (b becomes x) for a symmetric positive definite H with branch-induced sparsity under the
    // parent array `parents` (H(k, l) = 0 for l < k unless l is an ancestor of k): Featherstone's LTDL
    // factorization H = L^T D L and its two substitutions (Featherstone 2008, Rigid Body Dynamics Algorithms,
    // sec. 6.5, Tables 6.3 and 6.4), in the lower triangle of H. Cost sum of depth^2 instead of n^3 / 6.
    // Returns false when a pivot is not positive (H not positive definite).
    bool solve_tree_sparse(Eigen::MatrixXd & H, Eigen::VectorXd & b) const
    {
      const int n = (int)H.rows();
      for (int k = n - 1; k >= 0; --k)
      {
        const double pivot = H(k, k);
        if (!(pivot > 0.0)) return false;
        for (int i = parents[k]; i >= 0; i = parents[i])
        {
          const double a = H(k, i) / pivot;
          for (int j = i; j >= 0; j = parents[j]) H(i, j) -= a * H(k, j);
          H(k, i) = a;
        }
      }
      for (int i = n - 1; i >= 0; --i)                 // b <- L^-T b
        for (int j = parents[i]; j >= 0; j = parents[j]) b[j] -= H(i, j) * b[i];
      for (int i = 0; i < n; ++i) b[i] /= H(i, i);     // D^-1
      for (int i = 0; i < n; ++i)                      // b <- L^-1 b
        for (int j = parents[i]; j >= 0; j = parents[j]) b[i] -= H(i, j) * b[j];
      return true;
    }

    // ydot = [a, zdot] at (q, y): command + elastic and damping forces (eqs. 10, 12), forward dynamics
    // (aba or eq. 16); zdot: the dampers' power at `dissipated` (an index in y, or -1), zero elsewhere.
    bool rhs(const Eigen::VectorXd & q_, const Eigen::VectorXd & y_, const Eigen::VectorXd & tau_cmd,
             int dissipated, Eigen::VectorXd & out)
    {
      auto v = y_.head(nv);
      tau = tau_cmd;
      double power = 0.0;
      const int ns = (int)selected_v.size();
      for (int i = 0; i < ns; ++i) { x[i] = q_[selected_q[i]]; rate[i] = v[selected_v[i]]; }
      force = f0;                                       // f0 - K x - C xdot (K, C sparse: springs are local)
      for (const Term & t : stiffness) force[t.target] -= t.value * x[t.source];
      if (damped)
      {
        damping.setZero();                   // C xdot
        for (const Term & t : damping_terms) damping[t.target] += t.value * rate[t.source];
        force -= damping;
        power = rate.dot(damping);
      }
      for (int i = 0; i < ns; ++i) tau[selected_v[i]] += force[i];
      if (has_loop)
      {
        if (has_fext)           // + sum_j J_j^T f_j = h - rnea(q, v, 0, f_ext): rnea last leaves data.v at (q, v)
        {
          bias = pin::nonLinearEffects(model, *data, q_, v);
          tau += bias - pin::rnea(model, *data, q_, v, zero_v, fext);
        }
        out.head(nv) = pin::constraintDynamics(model, *data, q_, v, tau, loop_models, loop_datas, prox);
      }
      else if (has_fext)
        out.head(nv) = pin::aba(model, *data, q_, v, tau, fext);
      else if (!reduced)
        out.head(nv) = pin::aba(model, *data, q_, v, tau);
      else
      {
        pin::crba(model, *data, q_);                   // the upper triangle of M
        tau -= pin::nonLinearEffects(model, *data, q_, v);
        reduced_force.setZero();                        // T^T (tau - h)
        for (const Entry & e : t_entries) reduced_force[e.column] += e.value * tau[e.row];
        double * reduced_mass = Mr.data();             // T^T M T on the entries solve_tree_sparse reads
        const double * mass = data->M.data();
        for (const int target : mass_pattern) reduced_mass[target] = 0.0;
        for (const Term & t : mass_terms) reduced_mass[t.target] += t.value * mass[t.source];
        if (!solve_tree_sparse(Mr, reduced_force)) return false;
        out.head(nv).setZero();                         // T a_r
        for (const Entry & e : t_entries) out[e.row] += e.value * reduced_force[e.column];
      }
      for (int i = nv; i < (int)out.size(); ++i) out[i] = 0.0;
      if (dissipated >= 0) out[dissipated] = power;
      if (has_fext && external_rate >= 0)       // sum_j f_j . v_j, the joint velocities the pass left in data
      {
        double work = 0.0;
        for (const int j : loaded) work += fext[j].dot(data->v[j]);
        out[external_rate] = work;
      }
      if (has_fext && impulse_rate >= 0)        // sum_j oMi_j f_j at q
      {
        pin::forwardKinematics(model, *kinematics, q_);
        pin::Force total = pin::Force::Zero();
        for (const int j : loaded) total += kinematics->oMi[j].act(fext[j]);
        out.segment<3>(impulse_rate) = total.linear();
        out.segment<3>(impulse_rate + 3) = total.angular();
      }
      return true;
    }

    void resize(int ny_)
    {
      ny = ny_;
      d.assign(5, Eigen::VectorXd::Zero(ny));
      k.assign(5, Eigen::VectorXd::Zero(nv));
      y.resize(ny);
      y0.resize(ny);
    }
  };
}

#define SR_EXPORT __attribute__((visibility("default")))   // the library is built with hidden visibility

extern "C"
{
  // The model: njoints moving joints (universe excluded) in Pinocchio's order; per joint its kind, parent index
  // (0 = universe), axis (3; unaligned kinds), placement in its parent (12: rotation row-major, translation),
  // inertia (10: mass, centre of mass 3, rotational inertia about it xx, xy, yy, xz, yz, zz); armature (nv),
  // gravity (3, world frame, m/s^2). T's nonzeros (t_n of them: row, column, value) with nr columns (t_n = 0:
  // T = identity, aba), and the parent of each reduced coordinate under which T^T M T has branch-induced sparsity
  // (nr entries, -1 at a root; k - 1 for each k is always valid: a dense factorization). The elastic terms on the selected coordinates (n_selected): their q and v indices, K, C
  // (row-major n_selected x n_selected), f0. Returns nullptr and an error message in `error` (size error_size)
  // when the description is malformed.
  SR_EXPORT void * sr_flexible_create(int njoints, const int * kinds, const int * parents, const double * axes,
                            const double * placements, const double * inertias, const double * armature,
                            const double * gravity, int nr, const int * reduced_parents, int t_n, const int * t_rows, const int * t_columns,
                            const double * t_values, int n_selected, const int * selected_q,
                            const int * selected_v, const double * K, const double * C, const double * f0,
                            int n_dependent, int n_source, const int * dependent_q, const int * dependent_v,
                            const int * source_q, const int * source_v, const double * S,
                            char * error, int error_size)
  {
    auto fail = [&](const std::string & message) -> void * {
      if (error_size > 0) { message.copy(error, error_size - 1); error[std::min<int>(message.size(), error_size - 1)] = 0; }
      return nullptr;
    };
    Stepper * s = new Stepper();
    pin::Model & model = s->model;
    for (int j = 0; j < njoints; ++j)
    {
      const double * P = placements + 12 * j;
      Eigen::Matrix3d R;
      R << P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8];
      pin::SE3 placement(R, Eigen::Vector3d(P[9], P[10], P[11]));
      Eigen::Vector3d axis(axes[3 * j], axes[3 * j + 1], axes[3 * j + 2]);
      const int parent = parents[j];
      if (parent < 0 || parent > j) { delete s; return fail("joint " + std::to_string(j + 1) + ": bad parent"); }
      const std::string name = "j" + std::to_string(j + 1);
      pin::JointIndex id;
      switch (kinds[j])
      {
        case FREE_FLYER: id = model.addJoint(parent, pin::JointModelFreeFlyer(), placement, name); break;
        case RX: id = model.addJoint(parent, pin::JointModelRX(), placement, name); break;
        case RY: id = model.addJoint(parent, pin::JointModelRY(), placement, name); break;
        case RZ: id = model.addJoint(parent, pin::JointModelRZ(), placement, name); break;
        case PX: id = model.addJoint(parent, pin::JointModelPX(), placement, name); break;
        case PY: id = model.addJoint(parent, pin::JointModelPY(), placement, name); break;
        case PZ: id = model.addJoint(parent, pin::JointModelPZ(), placement, name); break;
        case RUBX: id = model.addJoint(parent, pin::JointModelRUBX(), placement, name); break;
        case RUBY: id = model.addJoint(parent, pin::JointModelRUBY(), placement, name); break;
        case RUBZ: id = model.addJoint(parent, pin::JointModelRUBZ(), placement, name); break;
        case REVOLUTE_UNALIGNED:
          id = model.addJoint(parent, pin::JointModelRevoluteUnaligned(axis), placement, name); break;
        case PRISMATIC_UNALIGNED:
          id = model.addJoint(parent, pin::JointModelPrismaticUnaligned(axis), placement, name); break;
        default: delete s; return fail("joint " + std::to_string(j + 1) + ": unknown kind");
      }
      const double * I = inertias + 10 * j;
      Eigen::Matrix3d rotational;
      rotational << I[4], I[5], I[7], I[5], I[6], I[8], I[7], I[8], I[9];
      model.appendBodyToJoint(id, pin::Inertia(I[0], Eigen::Vector3d(I[1], I[2], I[3]), rotational),
                              pin::SE3::Identity());
    }
    model.gravity = pin::Motion(Eigen::Vector3d(gravity[0], gravity[1], gravity[2]), Eigen::Vector3d::Zero());
    model.armature = ConstVec(armature, model.nv);
    s->data = new pin::Data(model);
    const int nv = model.nv;
    s->nq = model.nq;
    s->nv = nv;
    s->reduced = t_n > 0;
    s->nr = s->reduced ? nr : nv;
    for (int i = 0; i < t_n; ++i)
    {
      if (t_rows[i] < 0 || t_rows[i] >= nv || t_columns[i] < 0 || t_columns[i] >= nr)
      { delete s; return fail("T entry out of range"); }
      s->t_entries.push_back({t_rows[i], t_columns[i], t_values[i]});
    }
    for (int k = 0; k < (s->reduced ? nr : 0); ++k)
    {
      if (reduced_parents[k] < -1 || reduced_parents[k] >= k) { delete s; return fail("reduced parent out of range"); }
      s->parents.push_back(reduced_parents[k]);
    }
    if (s->reduced)                        // T^T M T's terms: M (i, j) with i, j of the columns k, l of T
    {
      std::vector<std::vector<std::pair<int, double>>> column(nr);
      for (const Entry & e : s->t_entries) column[e.column].emplace_back(e.row, e.value);
      for (int k = 0; k < nr; ++k)
        for (int l = k; l >= 0; l = s->parents[l])
        {
          const int target = k + l * nr;
          s->mass_pattern.push_back(target);
          for (const auto & a : column[k])
            for (const auto & b : column[l])
            {
              const int i = std::min(a.first, b.first), j = std::max(a.first, b.first);
              s->mass_terms.push_back({target, i + j * nv, a.second * b.second});
            }
        }
    }
    s->selected_q.assign(selected_q, selected_q + n_selected);
    s->selected_v.assign(selected_v, selected_v + n_selected);
    for (int i = 0; i < n_selected; ++i)
      if (selected_q[i] < 0 || selected_q[i] >= model.nq || selected_v[i] < 0 || selected_v[i] >= nv)
      { delete s; return fail("selected coordinate out of range"); }
    for (int i = 0; i < n_selected; ++i)
      for (int j = 0; j < n_selected; ++j)
      {
        if (K[i * n_selected + j] != 0.0) s->stiffness.push_back({i, j, K[i * n_selected + j]});
        if (C[i * n_selected + j] != 0.0) s->damping_terms.push_back({i, j, C[i * n_selected + j]});
      }
    s->f0 = ConstVec(f0, n_selected);
    s->damped = !s->damping_terms.empty();
    s->dependent_q.assign(dependent_q, dependent_q + n_dependent);
    s->dependent_v.assign(dependent_v, dependent_v + n_dependent);
    s->source_q.assign(source_q, source_q + n_source);
    s->source_v.assign(source_v, source_v + n_source);
    s->S = Eigen::Map<const RowMatrix>(S, n_dependent, n_source);
    for (int i = 0; i < n_dependent; ++i)
      if (dependent_q[i] < 0 || dependent_q[i] >= model.nq || dependent_v[i] < 0 || dependent_v[i] >= nv)
      { delete s; return fail("dependent coordinate out of range"); }
    for (int i = 0; i < n_source; ++i)
      if (source_q[i] < 0 || source_q[i] >= model.nq || source_v[i] < 0 || source_v[i] >= nv)
      { delete s; return fail("source coordinate out of range"); }
    for (pin::JointIndex j = 1; j < (pin::JointIndex)model.njoints; ++j)
      if (model.joints[j].nv() > 1) s->lie_blocks.emplace_back(model.joints[j].idx_v(), model.joints[j].nv());
    s->tau.resize(nv);
    s->x.resize(n_selected);
    s->rate.resize(n_selected);
    s->force.resize(n_selected);
    s->damping.resize(n_selected);
    s->q0.resize(model.nq);
    s->tau_cmd.resize(nv);
    s->reduced_force.resize(s->nr);
    s->Mr.resize(s->nr, s->nr);
    s->jac.setZero(nv, nv);           // dDifference writes its diagonal blocks only: the rest stays 0
    s->xi.resize(nv);
    s->q.resize(model.nq);
    s->kinematics = new pin::Data(model);
    s->fext.assign(model.njoints, pin::Force::Zero());
    s->zero_v = Eigen::VectorXd::Zero(nv);
    s->bias.resize(nv);
    return s;
  }

  // The held grasp from now on: c1 (placement1, 12 values as the joint placements) on joint1 welded to c2 on joint2,
  // Baumgarte gains kp (1/s^2) and kd (1/s) on all six rows (pinocchio_compat.rigid_constraint_6d); joint1 = -1
  // releases it. `force` (6) receives the first stage's multipliers of each step. Returns 0, or 1 for a bad joint.
  SR_EXPORT int sr_flexible_set_loop(void * handle, int joint1, const double * placement1, int joint2,
                                     const double * placement2, double kp, double kd, double * force)
  {
    Stepper & s = *static_cast<Stepper *>(handle);
    s.loop_models.clear();
    s.loop_datas.clear();
    s.has_loop = false;
    if (joint1 < 0) return 0;
    if (joint1 >= s.model.njoints || joint2 < 0 || joint2 >= s.model.njoints) return 1;
    auto placement = [](const double * P) {
      Eigen::Matrix3d R;
      R << P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8];
      return pin::SE3(R, Eigen::Vector3d(P[9], P[10], P[11]));
    };
    pin::RigidConstraintModel constraint(pin::CONTACT_6D, s.model, (pin::JointIndex)joint1, placement(placement1),
                                         (pin::JointIndex)joint2, placement(placement2), pin::LOCAL);
#if SR_PINOCCHIO_4
    constraint.setBaumgarteCorrectorParameters(pin::BaumgarteCorrectorParametersTpl<double>(kp, kd));
#else
    constraint.corrector.Kp.setConstant(kp);
    constraint.corrector.Kd.setConstant(kd);
#endif
    s.loop_models.push_back(constraint);
    s.loop_datas.push_back(pin::RigidConstraintData(constraint));
#if SR_PINOCCHIO_4
    pin::initConstraintDynamics(s.model, *s.data, s.loop_models, s.loop_datas);
#else
    pin::initConstraintDynamics(s.model, *s.data, s.loop_models);
#endif
    s.force_out = force;
    s.has_loop = true;
    return 0;
  }

  // External wrenches from now on: `forces` (6 per joint, universe first, LOCAL [f; n]) read at each step; n = 0
  // (or forces null) removes them. external_rate / impulse_rate: their places in y (-1: absent).
  SR_EXPORT void sr_flexible_set_wrenches(void * handle, const double * forces, int external_rate, int impulse_rate)
  {
    Stepper & s = *static_cast<Stepper *>(handle);
    s.fext_in = forces;
    s.has_fext = forces != nullptr;
    s.external_rate = external_rate;
    s.impulse_rate = impulse_rate;
    for (auto & f : s.fext) f.setZero();
    s.loaded.clear();
  }

  SR_EXPORT void sr_flexible_destroy(void * handle) { delete static_cast<Stepper *>(handle); }

  // The buffers sr_flexible_step reads and writes: q0 (nq), y0 (ny), tau (nv) in; q (nq), y (ny), dq (nv) out.
  SR_EXPORT void sr_flexible_bind(void * handle, const double * q0, const double * y0, int ny, const double * tau,
                        double * q, double * y, double * dq)
  {
    Stepper & s = *static_cast<Stepper *>(handle);
    s.q0_in = q0; s.y0_in = y0; s.tau_in = tau; s.q_out = q; s.y_out = y; s.dq_out = dq;
    if (ny != s.ny) s.resize(ny);
  }

  // One step of ManifoldRK4 (integrators.py) on the bound buffers: (q0, y0 = [v0, z0]) -> (q, y, dq) under tau
  // (nv, the generalized command), dt (s); `dissipated`: the index in y of the dissipated-energy state, or -1.
  // The dependent coordinates of q and y are then set from their sources (eq. 14, as CoordinateMap.project).
  // Returns 0; 1 when a reduced mass matrix is not positive definite (the outputs are then unspecified); 2 when q or
  // y is not finite.
  SR_EXPORT int sr_flexible_step(void * handle, double dt, int dissipated)
  {
    Stepper & s = *static_cast<Stepper *>(handle);
    const int nv = s.nv, ny = s.ny;
    s.q0 = ConstVec(s.q0_in, s.nq);
    s.y0 = ConstVec(s.y0_in, ny);
    s.tau_cmd = ConstVec(s.tau_in, nv);
    if (s.has_fext)
    {
      s.loaded.clear();
      for (int j = 0; j < s.model.njoints; ++j)
      {
        const double * f = s.fext_in + 6 * j;
        s.fext[j] = pin::Force(Eigen::Vector3d(f[0], f[1], f[2]), Eigen::Vector3d(f[3], f[4], f[5]));
        if (f[0] != 0.0 || f[1] != 0.0 || f[2] != 0.0 || f[3] != 0.0 || f[4] != 0.0 || f[5] != 0.0)
          s.loaded.push_back(j);
      }
    }
    const Eigen::VectorXd & q0 = s.q0, & y0 = s.y0, & tau_cmd = s.tau_cmd;
    if (!s.rhs(q0, y0, tau_cmd, dissipated, s.d[1])) return 1;
    if (s.has_loop)
      for (int i = 0; i < 6; ++i) s.force_out[i] = s.data->lambda_c[i];
    s.k[1] = y0.head(nv);
    const double h = 0.5 * dt;
    const double a[3] = {h, h, dt};
    for (int i = 2; i <= 4; ++i)
    {
      s.y = y0 + a[i - 2] * s.d[i - 1];
      s.xi = a[i - 2] * s.k[i - 1];
      pin::integrate(s.model, q0, s.xi, s.q);
      if (!s.rhs(s.q, s.y, tau_cmd, dissipated, s.d[i])) return 1;
      // dexp^-1: xi' = dDifference(q0, q)_ARG1 w (integrators.ManifoldRK4.dexp_inv); the matrix is block diagonal
      // and the identity on one-DOF joints
      pin::dDifference(s.model, q0, s.q, s.jac, pin::ARG1);
      s.k[i] = s.y.head(nv);
      for (const auto & b : s.lie_blocks)
        s.k[i].segment(b.first, b.second).noalias() =
          s.jac.block(b.first, b.first, b.second, b.second) * s.y.segment(b.first, b.second);
    }
    const double sixth = dt / 6.0;
    Vec y_result(s.y_out, ny), dq(s.dq_out, nv), q_result(s.q_out, s.nq);
    y_result = y0 + sixth * s.d[1] + (2.0 * sixth) * s.d[2] + (2.0 * sixth) * s.d[3] + sixth * s.d[4];
    s.xi = sixth * s.k[1] + (2.0 * sixth) * s.k[2] + (2.0 * sixth) * s.k[3] + sixth * s.k[4];
    dq = s.xi;
    pin::integrate(s.model, q0, s.xi, s.q);
    const int nd = (int)s.dependent_q.size(), ns = (int)s.source_q.size();
    for (int d = 0; d < nd; ++d)
    {
      double position = 0.0, rate = 0.0;
      for (int k = 0; k < ns; ++k)
      {
        position += s.S(d, k) * s.q[s.source_q[k]];
        rate += s.S(d, k) * y_result[s.source_v[k]];
      }
      s.q[s.dependent_q[d]] = position;
      y_result[s.dependent_v[d]] = rate;
    }
    q_result = s.q;
    return q_result.allFinite() && y_result.allFinite() ? 0 : 2;
  }
}
