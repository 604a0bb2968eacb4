//===- HostMemory_test.cpp - What the host has free, from a fake tree ----===//
//
// hostFreeMemory reads /proc/meminfo, /proc/self/cgroup and the cgroup
// files under a root; here the root is a folder written by the test, so
// every source and the choice between them is checked.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "device/HostMemory.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace sinter::rt {
namespace {

constexpr uint64_t MiB = 1 << 20;

void write(const test::TempDir &root, const std::string &path, const std::string &text) {
  std::filesystem::path file = root.path() + path;
  std::filesystem::create_directories(file.parent_path());
  test::writeBytes(file.string(), test::bytesOf(text));
}

void meminfo(const test::TempDir &root, uint64_t availableMiB) {
  write(root, "/proc/meminfo",
        "MemTotal:       33554432 kB\nMemFree:          123456 kB\nMemAvailable:   " +
            std::to_string(availableMiB * 1024) + " kB\n");
}

/// What hostFreeMemory reads under `root`: `mib` MiB, from `source`.
void expectFree(const test::TempDir &root, uint64_t mib, const std::string &source) {
  std::optional<FreeMemory> free = hostFreeMemory(root.path());
  ASSERT_TRUE(free);
  EXPECT_EQ(free->bytes, mib * MiB);
  EXPECT_EQ(free->source, source);
}

TEST(HostMemory, MemAvailableWithoutCgroupLimits) {
  test::TempDir root;
  meminfo(root, 20000);
  expectFree(root, 20000, "MemAvailable in /proc/meminfo");
}

TEST(HostMemory, NothingReadable) {
  test::TempDir root;
  EXPECT_FALSE(hostFreeMemory(root.path()));
}

TEST(HostMemory, TheProcessOwnCgroupV2LimitLessItsUsageButInactiveFiles) {
  test::TempDir root;
  meminfo(root, 20000);
  write(root, "/proc/self/cgroup", "0::/job/42\n");
  // The root's limit is none ("max"); the job's is 8 GiB, of which 5 GiB is
  // in use, 1 GiB of that inactive page cache: 4 GiB left.
  write(root, "/sys/fs/cgroup/memory.max", "max\n");
  write(root, "/sys/fs/cgroup/memory.current", "1000\n");
  write(root, "/sys/fs/cgroup/job/42/memory.max", std::to_string(8192 * MiB) + "\n");
  write(root, "/sys/fs/cgroup/job/42/memory.current", std::to_string(5120 * MiB) + "\n");
  write(root, "/sys/fs/cgroup/job/42/memory.stat",
        "anon 100\nfile 200\nactive_file 5\ninactive_file " + std::to_string(1024 * MiB) +
            "\n");
  expectFree(root, 4096, "the cgroup's memory.max less memory.current");
}

TEST(HostMemory, CgroupV1MemoryControllerAtTheRoot) {
  test::TempDir root;
  meminfo(root, 20000);
  // A container's view: its own group is the root of what it sees.
  write(root, "/proc/self/cgroup", "5:cpu,cpuacct:/\n4:memory:/\n0::/\n");
  write(root, "/sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(3000 * MiB));
  write(root, "/sys/fs/cgroup/memory/memory.usage_in_bytes", std::to_string(1500 * MiB));
  write(root, "/sys/fs/cgroup/memory/memory.stat",
        "cache 1\ninactive_file 7\ntotal_inactive_file " + std::to_string(500 * MiB) + "\n");
  expectFree(root, 2000, "the cgroup's memory.limit_in_bytes less memory.usage_in_bytes");
}

TEST(HostMemory, AGenerousCgroupLimitLeavesMemAvailable) {
  test::TempDir root;
  meminfo(root, 1000);
  write(root, "/proc/self/cgroup", "0::/\n");
  write(root, "/sys/fs/cgroup/memory.max", std::to_string(64000 * MiB));
  write(root, "/sys/fs/cgroup/memory.current", std::to_string(100 * MiB));
  expectFree(root, 1000, "MemAvailable in /proc/meminfo");
}

} // namespace
} // namespace sinter::rt
