//===- GraphRegions_test.cpp - When a region's work replays a graph -------===//

#include "device/GraphRegions.h"

#include <gtest/gtest.h>

namespace {

using sinter::rt::GraphRegions;
using Action = GraphRegions::Action;

int fakeGraph;

/// One run of region `region` with signature {a, b}: its action, and a
/// record made when it captures.
Action run(GraphRegions &regions, int64_t region, int64_t a, int64_t b) {
  const int64_t signature[2] = {a, b};
  Action action = regions.begin(region, signature, 2);
  if (action == Action::Capture)
    *regions.graph() = &fakeGraph;
  if (action == Action::Replay) {
    EXPECT_EQ(*regions.graph(), &fakeGraph);
  }
  regions.end();
  return action;
}

TEST(GraphRegions, WarmsThenCapturesThenReplays) {
  GraphRegions regions;
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Capture);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Replay);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Replay);
  EXPECT_EQ(regions.counts().direct, 1);
  EXPECT_EQ(regions.counts().captured, 1);
  EXPECT_EQ(regions.counts().replayed, 2);
}

TEST(GraphRegions, EachSignatureAndRegionHasItsOwnRecord) {
  GraphRegions regions;
  // One function of device work called for two layers: two signatures.
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 3, 4), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Capture);
  EXPECT_EQ(run(regions, 0, 3, 4), Action::Capture);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Replay);
  // Another region with the first one's signature starts over.
  EXPECT_EQ(run(regions, 1, 1, 2), Action::Direct);
  const int64_t shorter[1] = {1};
  EXPECT_EQ(regions.begin(0, shorter, 1), Action::Direct);
  regions.end();
}

TEST(GraphRegions, AChangingSignatureRunsDirect) {
  GraphRegions regions;
  // A learning rate that changes every step: never the same work twice.
  for (int64_t step = 0; step < int64_t(GraphRegions::kMostSignatures) + 10; ++step)
    EXPECT_EQ(run(regions, 0, step, 7), Action::Direct);
  // Past the limit a new signature is not remembered, so it never captures.
  int64_t late = int64_t(GraphRegions::kMostSignatures) + 100;
  EXPECT_EQ(run(regions, 0, late, 7), Action::Direct);
  EXPECT_EQ(run(regions, 0, late, 7), Action::Direct);
  // One remembered before the limit still captures.
  EXPECT_EQ(run(regions, 0, 0, 7), Action::Capture);
}

TEST(GraphRegions, AFailedCaptureRunsDirectFromThenOn) {
  GraphRegions regions;
  const int64_t signature[2] = {1, 2};
  EXPECT_EQ(regions.begin(0, signature, 2), Action::Direct);
  regions.end();
  EXPECT_EQ(regions.begin(0, signature, 2), Action::Capture);
  regions.captureFailed();
  regions.end();
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(regions.graph(), nullptr);
  EXPECT_EQ(regions.counts().captured, 0);
  EXPECT_EQ(regions.counts().direct, 4);
}

TEST(GraphRegions, ForgettingReleasesEveryRecordAndStartsOver) {
  GraphRegions regions;
  for (int i = 0; i < 3; ++i) {
    run(regions, 0, 1, 2);
    run(regions, 1, 1, 2);
  }
  int released = 0;
  // A workspace grows during a direct run of another region.
  const int64_t signature[2] = {5, 6};
  EXPECT_EQ(regions.begin(2, signature, 2), Action::Direct);
  regions.forget([&](void *graph) {
    EXPECT_EQ(graph, &fakeGraph);
    ++released;
  });
  EXPECT_EQ(released, 2);
  EXPECT_EQ(regions.graph(), nullptr);
  regions.end();
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Capture);
}

TEST(GraphRegions, AFailedFirstRunDoesNotCountAsWarm) {
  GraphRegions regions;
  const int64_t signature[2] = {1, 2};
  EXPECT_EQ(regions.begin(0, signature, 2), Action::Direct);
  regions.runFailed();
  regions.end();
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Capture);
}

TEST(GraphRegions, AFailedOrForgottenCaptureCountsAsDirect) {
  GraphRegions regions;
  const int64_t signature[2] = {1, 2};
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  // The recording run fails: it runs again as the recording run.
  EXPECT_EQ(regions.begin(0, signature, 2), Action::Capture);
  regions.runFailed();
  regions.end();
  EXPECT_EQ(regions.counts().captured, 0);
  EXPECT_EQ(regions.counts().direct, 2);
  // A workspace grows while it records: every record is forgotten.
  EXPECT_EQ(regions.begin(0, signature, 2), Action::Capture);
  regions.forget([](void *) {});
  regions.end();
  EXPECT_EQ(regions.counts().captured, 0);
  EXPECT_EQ(regions.counts().direct, 3);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  EXPECT_EQ(run(regions, 0, 1, 2), Action::Capture);
  EXPECT_EQ(regions.counts().captured, 1);
}

TEST(GraphRegions, DisabledRunsEverythingDirect) {
  GraphRegions regions(/*enabled=*/false);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(run(regions, 0, 1, 2), Action::Direct);
  int kept = 0;
  regions.forEachGraph([&](void *) { ++kept; });
  EXPECT_EQ(kept, 0);
}

} // namespace
