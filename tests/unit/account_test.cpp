// SPDX-License-Identifier: MIT
#include "host/account.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace rig;

TEST(Account, FoundByNameWithItsIds) {
    auto root = host::find_account("root");
    ASSERT_TRUE(root);
    EXPECT_EQ(root->name, "root");
    EXPECT_EQ(root->uid, 0u);
    EXPECT_EQ(root->gid, 0u);
    EXPECT_FALSE(host::find_account("no-such-user-rig"));
}

// Samples of --jobs hand their shares to QEMU's user from several threads at once.
// getpwnam's one static entry holds, while another thread scans the passwd file, each
// line it passes (root's first), so a share could go to root instead; each lookup here has
// its own entry.
TEST(Account, LookupsFromManyThreadsAtOnceEachGetTheirOwnAnswer) {
    auto nobody = host::find_account("nobody");
    ASSERT_TRUE(nobody);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                auto found = host::find_account(t % 2 ? "root" : "nobody");
                uid_t expected = t % 2 ? 0 : nobody->uid;
                if (!found || found->uid != expected)
                    ++wrong;
            }
        });
    for (std::thread& thread : threads)
        thread.join();
    EXPECT_EQ(wrong, 0);
}
