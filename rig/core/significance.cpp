// SPDX-License-Identifier: MIT
// Welch's t-test and Mann-Whitney U on Boost.Math's distributions.
#include "core/significance.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/hypergeometric.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>

namespace rig::core {

namespace {

// SciPy's method="auto" uses the exact distribution unless both samples have more than
// 8 values; the same rule here makes rig's p-values match its figures.
constexpr size_t k_exact_up_to = 8;

// Count, mean and sample variance, each sum taken in the order the values are visited
// (visit(value, repeats)): the vector form sums in the caller's order, as it always did.
struct Moments {
    double n = 0;
    double mean = 0;
    double variance = 0;
};

template <class ForEach> Moments moments(size_t size, ForEach for_each) {
    Moments out;
    out.n = static_cast<double>(size);
    double sum = 0;
    for_each([&](double value, size_t repeats) {
        for (size_t i = 0; i < repeats; ++i)
            sum += value;
    });
    out.mean = sum / out.n;
    double squares = 0;
    for_each([&](double value, size_t repeats) {
        for (size_t i = 0; i < repeats; ++i)
            squares += (value - out.mean) * (value - out.mean);
    });
    out.variance = squares / (out.n - 1);
    return out;
}

Moments moments(const std::vector<double>& values) {
    return moments(values.size(), [&](auto&& visit) {
        for (double value : values)
            visit(value, 1);
    });
}

Moments moments(const Distribution& values) {
    return moments(values.size(), [&](auto&& visit) {
        for (const auto& entry : values.entries())
            visit(entry.value, entry.count);
    });
}

std::optional<TestResult> welch(const Moments& a, const Moments& b) {
    const double s1 = a.variance / a.n, s2 = b.variance / b.n;
    if (s1 + s2 <= 0)
        return std::nullopt;
    TestResult result;
    result.statistic = (a.mean - b.mean) / std::sqrt(s1 + s2);
    result.df = (s1 + s2) * (s1 + s2) / (s1 * s1 / (a.n - 1) + s2 * s2 / (b.n - 1));
    boost::math::students_t distribution(result.df);
    result.p =
        2 * boost::math::cdf(boost::math::complement(distribution, std::fabs(result.statistic)));
    result.p = std::min(1.0, result.p);
    return result;
}

// Counts of arrangements of the ranks whose U is u, for u = 0 .. n1 * n2: the
// coefficients of the Gaussian binomial [n1 + n2 choose m], m = min(n1, n2), built as the
// product over i = 1..m of (1 - q^(n + i)) / (1 - q^i). Each partial product is itself a
// polynomial, and the work is O(m^2 n), small because m <= k_exact_up_to.
std::vector<double> u_frequencies(size_t n1, size_t n2) {
    const size_t m = std::min(n1, n2), n = std::max(n1, n2);
    std::vector<double> poly(m * n + 1, 0.0);
    poly[0] = 1;
    for (size_t i = 1; i <= m; ++i) {
        for (size_t k = poly.size(); k-- > n + i;)
            poly[k] -= poly[k - n - i];
        for (size_t k = i; k < poly.size(); ++k)
            poly[k] += poly[k - i];
    }
    return poly;
}

} // namespace

std::optional<TestResult> welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() < 2 || b.size() < 2)
        return std::nullopt;
    return welch(moments(a), moments(b));
}

std::optional<TestResult> welch_t_test(const Distribution& a, const Distribution& b) {
    if (a.size() < 2 || b.size() < 2)
        return std::nullopt;
    return welch(moments(a), moments(b));
}

std::optional<TestResult> mann_whitney_u(const std::vector<double>& a,
                                         const std::vector<double>& b) {
    return mann_whitney_u(Distribution(a), Distribution(b));
}

std::optional<TestResult> mann_whitney_u(const Distribution& a, const Distribution& b) {
    if (a.empty() || b.empty())
        return std::nullopt;
    const size_t n1 = a.size(), n2 = b.size(), total = n1 + n2;
    // Midranks of the pooled values, a tie group per distinct value (the two sides'
    // entries merged in order); tie groups feed the variance correction.
    double rank_sum_a = 0, tie_term = 0;
    bool ties = false;
    size_t i = 0; // values ranked so far
    auto in_a = a.entries().begin(), in_b = b.entries().begin();
    while (in_a != a.entries().end() || in_b != b.entries().end()) {
        const double value = in_b == b.entries().end()   ? in_a->value
                             : in_a == a.entries().end() ? in_b->value
                                                         : std::min(in_a->value, in_b->value);
        size_t from_a = 0, from_b = 0;
        if (in_a != a.entries().end() && in_a->value == value)
            from_a = (in_a++)->count;
        if (in_b != b.entries().end() && in_b->value == value)
            from_b = (in_b++)->count;
        const size_t j = i + from_a + from_b;
        const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
        const double group = static_cast<double>(j - i);
        tie_term += group * group * group - group;
        ties |= j - i > 1;
        for (size_t k = 0; k < from_a; ++k)
            rank_sum_a += midrank;
        i = j;
    }
    const double m = static_cast<double>(n1), n = static_cast<double>(n2);
    TestResult result;
    result.statistic = rank_sum_a - m * (m + 1) / 2;
    const double mean_u = m * n / 2;

    if (std::min(n1, n2) <= k_exact_up_to && !ties) {
        auto frequencies = u_frequencies(n1, n2);
        const double arrangements = std::accumulate(frequencies.begin(), frequencies.end(), 0.0);
        const auto u = static_cast<size_t>(std::llround(result.statistic));
        double at_most = 0, at_least = 0;
        for (size_t k = 0; k < frequencies.size(); ++k) {
            if (k <= u)
                at_most += frequencies[k];
            if (k >= u)
                at_least += frequencies[k];
        }
        result.p = std::min(1.0, 2 * std::min(at_most, at_least) / arrangements);
        return result;
    }

    const double t = static_cast<double>(total);
    const double variance = m * n / 12 * ((t + 1) - tie_term / (t * (t - 1)));
    if (variance <= 0)
        return std::nullopt;
    // Continuity correction toward the mean, as SciPy's use_continuity=True.
    const double z = (std::fabs(result.statistic - mean_u) - 0.5) / std::sqrt(variance);
    boost::math::normal standard;
    result.p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(standard, z)));
    return result;
}

std::string_view test_name(Test test) {
    return test == Test::welch ? "Welch's t-test" : "Mann-Whitney U";
}

std::optional<TestResult> run_test(Test test, const std::vector<double>& a,
                                   const std::vector<double>& b) {
    return test == Test::welch ? welch_t_test(a, b) : mann_whitney_u(a, b);
}

std::optional<TestResult> run_test(Test test, const Distribution& a, const Distribution& b) {
    return test == Test::welch ? welch_t_test(a, b) : mann_whitney_u(a, b);
}

double fisher_greater(int a, int n_a, int b, int n_b) {
    if (a <= 0 || n_a <= 0)
        return 1;
    // Boost's parameters: events in all, trials drawn (the first group), trials in all.
    const unsigned events = static_cast<unsigned>(a + b);
    const unsigned drawn = static_cast<unsigned>(n_a);
    const unsigned total = static_cast<unsigned>(n_a + n_b);
    boost::math::hypergeometric_distribution<double> distribution(events, drawn, total);
    // P(X >= a) = 1 - P(X <= a - 1); below the support's least value it is 1.
    unsigned least = drawn + events > total ? drawn + events - total : 0;
    if (static_cast<unsigned>(a - 1) < least)
        return 1;
    return std::clamp(boost::math::cdf(boost::math::complement(distribution, a - 1u)), 0.0, 1.0);
}

double rate_lower_bound(int successes, int trials, double level) {
    if (successes <= 0 || trials <= 0)
        return 0;
    return boost::math::binomial_distribution<double>::find_lower_bound_on_p(
        trials, std::min(successes, trials), 1 - level);
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
    const size_t m = p.size();
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    // From the largest p down: q(i) = min over j >= i of p(j) * m / j, at most 1.
    std::vector<double> q(m);
    double smallest = 1;
    for (size_t k = 0; k < m; ++k) {
        const size_t rank = m - k;
        smallest = std::min(smallest, p[order[k]] * static_cast<double>(m) / rank);
        q[order[k]] = smallest;
    }
    return q;
}

std::optional<std::pair<double, double>> mean_ci(const Summary& summary) {
    if (summary.n < 2)
        return std::nullopt;
    boost::math::students_t distribution(static_cast<double>(summary.n - 1));
    double half = boost::math::quantile(boost::math::complement(distribution, 0.025)) *
                  summary.stddev / std::sqrt(static_cast<double>(summary.n));
    return std::make_pair(summary.mean - half, summary.mean + half);
}

} // namespace rig::core
