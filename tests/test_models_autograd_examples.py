"""Models adapted from the examples of autograd (github.com/HIPS/autograd, `examples/`).

Each model's loss (and, where the example has one, its training step) is written as the
example's author wrote it, changed only where Myia's subset requires it (a generator of
NumPy's ``Generator`` API is passed as an argument where the example draws from a
``RandomState``), each change said in a comment. Each runs on every backend: its value
against plain NumPy, its gradient against autograd's (where autograd is installed) and
against finite differences (`myia.testing.check_grad`, float64).
"""

from __future__ import annotations

import copy
import types

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp
from scipy.stats import multivariate_normal as mvn
from scipy.stats import norm
from scipy.stats import t as student_t

from myia import custom_bprop, grad, jvp, myia, value_and_grad, vjp
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax", "native"]

# -- logistic_regression ------------------------------------------------------------------


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1)


def logistic_predictions(weights, inputs):
    return sigmoid(np.dot(inputs, weights))


def lr_training_loss(weights, inputs, targets):
    preds = logistic_predictions(weights, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


def lr_train(weights, inputs, targets):
    for _ in range(10):
        weights = weights - grad(lr_training_loss)(weights, inputs, targets) * 0.01
    return lr_training_loss(weights, inputs, targets)


# -- rosenbrock -----------------------------------------------------------------------------


def rosenbrock(x):
    return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2


# -- tanh (elementwise derivatives) ---------------------------------------------------------


def tanh(x):
    return (1.0 - np.exp(-2 * x)) / (1.0 + np.exp(-(2 * x)))


def d1_tanh(x):
    return vjp(tanh, x)[1](np.ones_like(x))[0]


def d2_tanh(x):
    return vjp(d1_tanh, x)[1](np.ones_like(x))[0]


def tanh_derivs(x):
    return np.sum(tanh(x) + d1_tanh(x) + d2_tanh(x))


# -- sinusoid (Taylor series with a data-dependent break) -----------------------------------


def taylor_sin(x):
    currterm = x
    ans = currterm
    for i in range(1000):
        currterm = -currterm * x**2 / ((2 * i + 3) * (2 * i + 2))
        ans = ans + currterm
        if np.abs(currterm) < 0.2:
            break
    return ans


def taylor_dd(x):
    return grad(grad(taylor_sin))(x)


# -- neural_net (MNIST MLP) -----------------------------------------------------------------


def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    total = 0.0
    for W, b in params:
        total = total + np.dot(np.ravel(W), np.ravel(W)) + np.dot(b, b)
    return total


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def accuracy(params, inputs, targets):
    target_class = np.argmax(targets, axis=1)
    predicted_class = np.argmax(neural_net_predict(params, inputs), axis=1)
    return np.mean(predicted_class == target_class)


# -- neural_net_regression ------------------------------------------------------------------


def nn_predict(params, inputs, nonlinearity=np.tanh):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs


def log_gaussian(params, scale):
    total = 0.0
    for W, b in params:
        total = total + np.sum(norm.logpdf(W, 0, scale)) + np.sum(norm.logpdf(b, 0, scale))
    return total


def nnr_logprob(weights, inputs, targets, noise_scale=0.1):
    predictions = nn_predict(weights, inputs)
    return np.sum(norm.logpdf(predictions, targets, noise_scale))


def nnr_objective(weights, inputs, targets):
    return -nnr_logprob(weights, inputs, targets) - log_gaussian(weights, 10.0)


# -- gaussian_process -----------------------------------------------------------------------


def make_gp_funs(cov_func, num_cov_params):
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def predict(params, x, y, xstar):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_f_f = cov_func(cov_params, xstar, xstar)
        cov_y_f = cov_func(cov_params, x, xstar)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        pred_mean = mean + np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, y - mean)
        pred_cov = cov_f_f - np.dot(np.linalg.solve(cov_y_y, cov_y_f).T, cov_y_f)
        return pred_mean, pred_cov

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn.logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, predict, log_marginal_likelihood


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))


GP_NUM_PARAMS, gp_predict, gp_log_marginal_likelihood = make_gp_funs(rbf_covariance, 2)


def gp_objective(params, x, y):
    return -gp_log_marginal_likelihood(params, x, y)


def gp_predict_summary(params, x, y, xstar):
    pred_mean, pred_cov = gp_predict(params, x, y, xstar)
    return np.sum(pred_mean) + np.sum(np.sqrt(np.diag(pred_cov)))


# -- rnn and lstm ---------------------------------------------------------------------------


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params["change"], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens, cells = update_lstm(input, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def lstm_log_likelihood(params, inputs, targets):
    logprobs = lstm_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


# -- black_box_svi --------------------------------------------------------------------------


def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    def variational_objective(params, t, rs):
        mean, log_std = unpack_params(params)
        samples = rs.standard_normal((num_samples, D)) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective, unpack_params


def svi_log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = norm.logpdf(log_sigma, 0, 1.35)
    mu_density = norm.logpdf(mu, 0, np.exp(log_sigma))
    return sigma_density + mu_density


svi_objective, svi_unpack = black_box_variational_inference(svi_log_density, 2, 50)


def svi_steps(params, rs):
    for t in range(3):
        params = params - 0.05 * grad(svi_objective)(params, t, rs)
    return params


# -- gmm ------------------------------------------------------------------------------------


def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params["log proportions"])
    return normalized_log_proportions, params["means"], params["lower triangles"]


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + mvn.logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


def gmm_objective(params, data):
    return -gmm_log_likelihood(params, data)


# -- convnet (the parameter parser, a convolution, max pooling, the dense layers) ------------


class WeightsParser:
    """Where each named block of weights is in the parameter vector (built outside Myia)."""

    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += int(np.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)


CONV = WeightsParser()
for _name, _shape in [("filters", (1, 3, 2, 2)), ("biases", (1, 3, 1, 1)), ("dense", (12, 2))]:
    CONV.add_weights(_name, _shape)
CONV.add_weights("dense biases", (2,))
CONV_BLOCKS = CONV.idxs_and_shapes


def parser_get(vect, name):
    # (the example's ``parser.get``: Myia code reads a module's dict as a constant, where
    # the fields of an object, a plain one or a dataclass instance, are not constants)
    idxs, shape = CONV_BLOCKS[name]
    return np.reshape(vect[idxs], shape)


def convolve_valid(inputs, filters):
    # (scipy.signal.convolve(mode="valid"): the sum over the kernel of shifted images)
    n, _, h, w = inputs.shape
    _, o, kh, kw = filters.shape
    out = np.zeros((n, o, h - kh + 1, w - kw + 1))  # (0.0 is a number: its type would change)
    for i in range(kh):
        for j in range(kw):
            patch = inputs[:, :, i : i + h - kh + 1, j : j + w - kw + 1]
            out = out + np.einsum("ncyx,co->noyx", patch, filters[:, :, kh - 1 - i, kw - 1 - j])
    return out


def maxpool(inputs, pool_shape):
    new_shape = inputs.shape[:2]
    for i in (0, 1):  # (a tuple, unrolled: over the list [0, 1], a loop, the shape would grow)
        new_shape += (inputs.shape[i + 2] // pool_shape[i], pool_shape[i])
    return np.max(np.max(inputs.reshape(new_shape), axis=3), axis=4)


def conv_loss(W_vect, X, T):
    cur = np.tanh(convolve_valid(X, parser_get(W_vect, "filters")) + parser_get(W_vect, "biases"))
    cur = maxpool(cur, (2, 2))
    cur = cur.reshape((cur.shape[0], np.prod(cur.shape[1:])))
    x = np.dot(cur, parser_get(W_vect, "dense")) + parser_get(W_vect, "dense biases")
    log_lik = np.sum((x - logsumexp(x, axis=1, keepdims=True)) * T)
    return 0.1 * np.dot(W_vect, W_vect) - log_lik


# -- ica ------------------------------------------------------------------------------------


def ica_predict(weights, latents):
    return np.dot(weights, latents).T


def ica_logprob(weights, latents, noise_std, observed):
    preds = ica_predict(weights, latents)
    return np.sum(student_t.logpdf(preds, 2.4, observed, noise_std))


def ica_objective(params, observed):
    weights = np.reshape(params[:6], (3, 2))
    latents = np.reshape(params[6:-1], (2, 4))
    noise_std = np.exp(params[-1])
    return -ica_logprob(weights, latents, noise_std, observed)


# -- negative_binomial_maxlike --------------------------------------------------------------


def negbin_loglike(r, p, x):
    return gammaln(r + x) - gammaln(r) - gammaln(x + 1) + x * np.log(p) + r * np.log(1 - p)


def negbin_newton(r, x):
    loglike = lambda r, p: np.sum(negbin_loglike(r, p, x))  # noqa: E731
    p = lambda r: np.sum(x) / np.sum(r + x)  # noqa: E731
    rprime = lambda r: grad(loglike)(r, p(r))  # noqa: E731
    for _ in range(3):  # (scipy.optimize.newton's iterations)
        r = r - rprime(r) / grad(rprime)(r)
    return r, p(r)


def negbin_total(r, p, x):
    return np.sum(negbin_loglike(r, p, x))


# -- hmm_em ---------------------------------------------------------------------------------


def hmm_normalize(a):
    def replace_zeros(a):
        return np.where(a > 0.0, a, 1.0)

    return a / replace_zeros(a.sum(-1, keepdims=True))


def log_partition_function(natural_params, data):
    log_pi, log_A, log_B = natural_params
    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]
    return logsumexp(log_alpha)


def hmm_em_update(params, data):
    natural_params = tuple(map(np.log, params))
    loglike, E_stats = value_and_grad(log_partition_function)(natural_params, data)
    return loglike, tuple(map(hmm_normalize, E_stats))


# -- fixed_points ---------------------------------------------------------------------------


def grad_descent_sqrt_iter(a):
    return lambda x: x - 0.05 * (x**2 - a)


def fixed_point_sqrt(a, guess=10.0):
    f = grad_descent_sqrt_iter(a)
    x, x_prev = f(guess), guess
    while np.abs(x - x_prev) > 1e-9:
        x, x_prev = f(x), x
    return x


# -- define_gradient ------------------------------------------------------------------------


def my_logsumexp(x):
    max_x = np.max(x)
    return max_x + np.log(np.sum(np.exp(x - max_x)))


@custom_bprop(my_logsumexp)
def my_logsumexp_bprop(x, ans, g):
    return (np.full(x.shape, g) * np.exp(x - np.full(x.shape, ans)),)


def define_gradient_example(y):
    z = y**2
    lse = my_logsumexp(z)
    return np.sum(lse)


# -- fluidsim -------------------------------------------------------------------------------


def project(vx, vy):
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            np.roll(vx, -1, axis=0)
            - np.roll(vx, 1, axis=0)
            + np.roll(vy, -1, axis=1)
            - np.roll(vy, 1, axis=1)
        )
    )
    for _ in range(10):
        p = (
            div
            + np.roll(p, 1, axis=0)
            + np.roll(p, -1, axis=0)
            + np.roll(p, 1, axis=1)
            + np.roll(p, -1, axis=1)
        ) / 4.0
    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def advect(f, vx, vy):
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()
    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix
    bw = center_ys - top_ix
    left_ix = np.mod(left_ix, rows)
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)
    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) + rw * (
        (1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix]
    )
    return np.reshape(flat_f, (rows, cols))


def simulate(vx, vy, smoke, num_time_steps):
    for _ in range(num_time_steps):
        vx_updated = advect(vx, vx, vy)
        vy_updated = advect(vy, vx, vy)
        vx, vy = project(vx_updated, vy_updated)
        smoke = advect(smoke, vx, vy)
    return smoke


def fluid_distance(init_vx, init_vy, smoke, target):
    final = simulate(init_vx, init_vy, smoke, 3)
    return np.mean((final - target) ** 2)


# -- generative_adversarial_net -------------------------------------------------------------


def relu(x):
    return np.maximum(0, x)


def batch_normalize(activations):
    mbmean = np.mean(activations, axis=0, keepdims=True)
    return (activations - mbmean) / (np.std(activations, axis=0, keepdims=True) + 1)


def logsigmoid(x):
    return x - np.logaddexp(0, x)


def gan_net_predict(params, inputs):
    inpW, inpb = params[0]
    inputs = relu(np.dot(inputs, inpW) + inpb)
    for W, b in params[1:-1]:
        outputs = batch_normalize(np.dot(inputs, W) + b)
        inputs = relu(outputs)
    outW, outb = params[-1]
    outputs = np.dot(inputs, outW) + outb
    return outputs


def gan_objective(gen_params, dsc_params, real_data, rs):
    noise = rs.random((4, 2))
    fake_data = sigmoid(gan_net_predict(gen_params, noise))
    logprobs_fake = logsigmoid(gan_net_predict(dsc_params, fake_data))
    logprobs_real = logsigmoid(gan_net_predict(dsc_params, real_data))
    return np.mean(logprobs_real) - np.mean(logprobs_fake)


# -- ode_net (odeint as fixed-step RK4) -----------------------------------------------------


def ode_func(y, t0, A):
    return np.dot(y**3, A)


def odeint_rk4(func, y0, t, args):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k1 = func(y, t[i], *args)
        k2 = func(y + h * k1 / 2, t[i] + h / 2, *args)
        k3 = func(y + h * k2 / 2, t[i] + h / 2, *args)
        k4 = func(y + h * k3, t[i] + h, *args)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        ys.append(y)
    return ys


def ode_loss(A, y0, t, targets):
    pred = odeint_rk4(ode_func, y0, t, (A,))
    total = 0.0
    for i in range(len(pred)):
        total = total + np.mean(np.abs(pred[i] - targets[i]))
    return total / len(pred)


# The runs -----------------------------------------------------------------------------------


def autograd_version(fn):
    """`fn` with this module's NumPy and SciPy names bound to autograd's."""
    anp = pytest.importorskip("autograd.numpy")
    import autograd.scipy.special as asp
    import autograd.scipy.stats as ass

    names = dict(globals(), np=anp, logsumexp=asp.logsumexp, gammaln=asp.gammaln)
    names.update(norm=ass.norm, mvn=ass.multivariate_normal, student_t=ass.t)
    done = {}

    def rebind(v):
        if not (isinstance(v, types.FunctionType) and v.__module__ == __name__):
            return getattr(anp, v.__name__) if isinstance(v, np.ufunc) else v
        if v not in done:
            cells = v.__closure__ and tuple(
                types.CellType(rebind(c.cell_contents)) for c in v.__closure__
            )
            defaults = v.__defaults__ and tuple(rebind(d) for d in v.__defaults__)
            done[v] = types.FunctionType(v.__code__, names, v.__name__, defaults, cells)
        return done[v]

    for k, v in list(names.items()):
        names[k] = rebind(v)
    return rebind(fn)


def fresh(args):
    """Copies of `args`; a generator is given as a seed (each call draws the same numbers)."""
    return tuple(
        np.random.default_rng(a.seed) if isinstance(a, Seed) else copy.deepcopy(a) for a in args
    )


class Seed:
    def __init__(self, seed):
        self.seed = seed


def assert_close(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_close(a[k], b[k])
    else:
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-11)


R = np.random.RandomState(0)


def mlp(*sizes):
    return [(R.randn(m, n) * 0.5, R.randn(n) * 0.5) for m, n in zip(sizes[:-1], sizes[1:])]


def rnn_params(*names):
    return {k: R.randn(1 if k.startswith("init") else 8, 4) * 0.3 for k in names}


LR_X = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.3], [0.74, -2.49, 1.39]])
LR_T = np.array([True, True, False, True])
NN_X, NN_T = R.randn(5, 3), np.eye(2)[[0, 1, 1, 0, 1]]
GP_X = np.linspace(-1, 1, 5).reshape(5, 1)
GP_P = np.array([0.1, -1.0, 0.2, -0.3])
SEQ = np.eye(3)[R.randint(0, 3, (5, 2))]
RNN_P = dict(rnn_params("init hiddens", "change"), predict=R.randn(5, 3) * 0.3)
LSTM_P = dict(RNN_P, **rnn_params("init cells", "forget", "ingate", "outgate"))
GMM_P = {
    "log proportions": R.randn(3) * 0.1,
    "means": R.randn(3, 2),
    "lower triangles": np.eye(2) + 0.1 * R.randn(3, 2, 2),
}
HMM_P = tuple(hmm_normalize(R.rand(*s)) for s in [(3,), (3, 3), (3, 4)])
HMM_Y = np.array([0, 2, 1, 3, 3])
NB_X = np.array([3.0, 7.0, 1.0, 0.0, 12.0, 5.0, 4.0, 9.0])
ODE_Y = [np.array([2.0, 0.0]) * (1 - 0.1 * i) for i in range(6)]
ODE_A = np.array([[-0.1, 2.0], [-2.0, -0.1]])

# (example, loss, arguments, what is checked: "grad" the value, finite differences and
# autograd's gradient; "rng" (it draws) the value and autograd's gradient; "value" the value)
CASES = [
    ("logistic_regression", lr_training_loss, (np.array([0.1, -0.2, 0.3]), LR_X, LR_T), "grad"),
    (
        "logistic_regression (training)",
        lr_train,
        (np.array([0.1, -0.2, 0.3]), LR_X, LR_T),
        "value",
    ),
    ("rosenbrock", rosenbrock, (np.array([0.3, 0.7]),), "grad"),
    ("tanh", tanh_derivs, (np.linspace(-2, 2, 5),), "value"),
    ("sinusoid", taylor_sin, (1.3,), "grad"),
    ("sinusoid (second derivative)", taylor_dd, (1.3,), "value"),
    ("neural_net", log_posterior, (mlp(3, 4, 2), NN_X, NN_T, 0.1), "grad"),
    ("neural_net (accuracy)", accuracy, (mlp(3, 4, 2), NN_X, NN_T), "value"),
    ("neural_net_regression", nnr_objective, (mlp(3, 4, 2), NN_X, NN_X[:, :2]), "grad"),
    ("gaussian_process", gp_objective, (GP_P, GP_X, np.cos(3 * GP_X[:, 0])), "grad"),
    (
        "gaussian_process (predict)",
        gp_predict_summary,
        (GP_P, GP_X, np.cos(3 * GP_X[:, 0]), GP_X[:4] * 1.5 + 0.1),
        "grad",
    ),
    ("rnn", rnn_log_likelihood, (RNN_P, SEQ, SEQ[::-1]), "grad"),
    ("lstm", lstm_log_likelihood, (LSTM_P, SEQ, SEQ[::-1]), "grad"),
    ("black_box_svi", svi_objective, (np.array([0.1, -0.2, -1.0, -0.5]), 0, Seed(0)), "rng"),
    ("black_box_svi (training)", svi_steps, (np.array([0.1, -0.2, -1.0, -0.5]), Seed(0)), "value"),
    ("gmm", gmm_objective, (GMM_P, R.randn(6, 2)), "grad"),
    ("convnet", conv_loss, (R.randn(CONV.N) * 0.5, R.randn(2, 1, 5, 5), np.eye(2)), "grad"),
    ("ica", ica_objective, (R.randn(15) * 0.5, R.randn(4, 3)), "grad"),
    ("negative_binomial_maxlike", negbin_total, (2.5, 0.4, NB_X), "grad"),
    ("negative_binomial_maxlike (newton)", negbin_newton, (2.5, NB_X), "value"),
    ("hmm_em", log_partition_function, (tuple(np.log(p) for p in HMM_P), HMM_Y), "grad"),
    ("hmm_em (EM update)", hmm_em_update, (HMM_P, HMM_Y), "value"),
    ("fixed_points", fixed_point_sqrt, (2.0,), "grad"),
    ("define_gradient", define_gradient_example, (R.randn(5),), "grad"),
    ("fluidsim", fluid_distance, (*(0.4 * R.randn(2, 4, 4)), R.rand(4, 4), R.rand(4, 4)), "grad"),
    (
        "generative_adversarial_net",
        gan_objective,
        (mlp(2, 4, 4, 3), mlp(3, 4, 4, 1), R.rand(4, 3), Seed(1)),
        "rng",
    ),
    ("ode_net", ode_loss, (ODE_A, np.array([2.0, 0.0]), np.linspace(0, 0.5, 6), ODE_Y), "grad"),
]


#: Compiled in about a second on the debug backend; the others (and every model on the
#: other backends: seconds to tens of seconds each) are marked slow.
FAST = {"logistic_regression", "rosenbrock", "neural_net (accuracy)", "black_box_svi", "hmm_em"}
FAST |= {"negative_binomial_maxlike", "fixed_points", "define_gradient"}
RUNS = [
    pytest.param(case, backend, id=f"{case[0]}-{backend}", marks=() if fast else pytest.mark.slow)
    for case in CASES
    for backend in BACKENDS
    for fast in [backend == "debug" and case[0] in FAST]
]


@pytest.mark.parametrize("case, backend", RUNS)
def test_model(case, backend):
    _, fn, args, checked = case
    assert_close(myia(fn, backend=backend)(*fresh(args)), fn(*fresh(args)))
    if checked == "value":
        return
    if checked == "grad":
        check_grad(fn, *fresh(args), wrt=0, backend=backend)
    expected = pytest.importorskip("autograd").grad(autograd_version(fn))(*fresh(args))
    assert_close(grad(fn, backend=backend)(*fresh(args)), expected)


# natural_gradient_black_box_svi, and gmm's hessian_vector_product ---------------------------


def natural_gradient(lam, t, rs):
    _mu, log_sigma = svi_unpack(lam)
    fisher_diag = np.concatenate([np.exp(-2.0 * log_sigma), np.ones(len(log_sigma)) * 2])
    return (1.0 / fisher_diag) * grad(svi_objective)(lam, t, rs)


def hessian_vector_product(x, v, X, T):
    return jvp(lambda w: grad(lr_training_loss)(w, X, T), (x,), (v,))[1]


@pytest.mark.parametrize(
    "backend", ["debug"] + [pytest.param(b, marks=pytest.mark.slow) for b in BACKENDS[1:]]
)
def test_natural_gradient_and_hessian_vector_product(backend):
    autograd = pytest.importorskip("autograd")
    lam, x, v = np.array([0.1, -0.2, -1.0, -0.5]), np.array([0.1, -0.2, 0.3]), np.ones(3)
    got = myia(natural_gradient, backend=backend)(lam, 0, np.random.default_rng(0))
    g = autograd.grad(autograd_version(svi_objective))(lam, 0, np.random.default_rng(0))
    assert_close(got, g / np.concatenate([np.exp(-2.0 * lam[2:]), [2.0, 2.0]]))
    got = myia(hessian_vector_product, backend=backend)(x, v, LR_X, LR_T)
    h = autograd.hessian_vector_product(autograd_version(lr_training_loss))
    assert_close(got, h(x, LR_X, LR_T, v))
