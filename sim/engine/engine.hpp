#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/autoscaler.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/router.hpp"
#include "sim/engine/run_observer.hpp"
#include "sim/engine/slo.hpp"
#include "sim/engine/speculation.hpp"
#include "sim/engine/workload.hpp"
#include "sim/hardware/link_network.hpp"

namespace servesim {

struct EngineTotals {
  std::int64_t arrived = 0;
  std::int64_t finished = 0;
  std::int64_t rejected = 0;  // fits no replica, or refused by the router's admission control
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  SimTime first_arrival = 0;
  SimTime end_time = 0;  // time of the last event
  // The fleet's highest board power over the run (W): every replica's idle power plus the
  // steps in flight at one instant; 0 when the cost model prices no energy.
  double peak_power_w = 0;
  bool complete =
      true;  // false: stopped early (EngineParts::stop); arrived − finished − rejected unfinished
  // Disaggregated serving: KV transfers ended, their bytes and tokens, and the requests that
  // found no decode replica with room at their first token and waited for one (hand-off queue).
  std::int64_t transfers = 0;
  double transfer_bytes = 0;
  std::int64_t transfer_tokens = 0;
  std::int64_t handoff_waits = 0;
  // Speculative decoding: decode steps of requests that verified drafts, drafts proposed and
  // accepted.
  std::int64_t spec_steps = 0;
  std::int64_t spec_drafted = 0;
  std::int64_t spec_accepted = 0;
};

using EngineProgress = std::function<void(const EngineTotals&, SimTime now)>;

// What one run is made of, handed to the Engine at construction; everything it points at must
// outlive the engine. The first five are every run's; the rest are optional and default to off.
struct EngineParts {
  Fleet& fleet;
  Router& router;
  Workload& workload;
  const CostModel& cost_model;
  std::vector<RunObserver*> observers = {};
  // Gives every request its SLO class (a trace's class, else slo->classify with the seeded draw
  // of its id) and its deadline (SloPolicy::deadline, less `slo_overhead_ns`). Null: requests
  // have no class and no deadline.
  const SloPolicy* slo = nullptr;
  SimTime slo_overhead_ns = 0;
  std::uint64_t slo_seed = 0;
  // Prefill/decode disaggregation, for a fleet of prefill and decode replicas (no mixed ones).
  // The router places arrivals on prefill replicas; a request with more than one output token
  // is handed off at its first token: it waits in a FIFO hand-off queue until a decode replica
  // has a seat and KV for its prompt above the watermark (the decode router picks among those),
  // whose KV is then allocated; its KV moves over `cluster`'s links (LinkNetwork) while the
  // prefill replica still holds it; at the end the prefill side frees it and the request decodes
  // on the decode replica. Every decode replica's scheduler must be a DecodeRole and every other
  // one's a PrefillRole. Both null: no disaggregation.
  Router* decode_router = nullptr;
  const ClusterSpec* cluster = nullptr;
  // Speculative decoding: a scheduled decode that verifies draft tokens (BatchEntry::draft_tokens,
  // the schedulers' SchedulerOptions::num_speculative_tokens) is priced and resolved by
  // `speculation`: its step emits 1 + the accepted drafts as one chunk. Null: every entry with
  // draft tokens is an error.
  const Speculation* speculation = nullptr;
  // Autoscaling (a fleet built with the autoscaler's max_replicas): routers are offered only the
  // autoscaler's active replicas, and a router that returns another is an error; it evaluates
  // every interval from time 0 until the run has nothing left; a provisioning replica becomes
  // active after its delay, a draining one is released once it holds nothing. It must be among
  // the observers. Not with disaggregation or a router that holds requests in a fleet-level
  // queue. Null: a static fleet.
  Autoscaler* autoscaler = nullptr;
  // While *stop is true run() returns after the event it is on, with complete = false (SIGINT,
  // SIGTERM: the handler sets it). Read once per event, relaxed.
  const std::atomic<bool>* stop = nullptr;
  // Called every 65,536 events and once at the end, on the running thread.
  EngineProgress progress = {};
};

// The discrete-event loop of one run. It is handed its parts (EngineParts) so tests can pass
// fakes. Events: arrivals (all requests arriving at one instant are admitted before any replica
// forms a batch) and step ends. A replica that goes idle forms its next batch at once.
// Single-threaded; deterministic for a given workload.
// Invariant at the end of a complete run(): arrived == finished + rejected, and every KV block is
// free. A router with a fleet-level queue (Router::queue) is wired to every non-decode replica's
// scheduler (which must be a FleetQueuePuller) at construction; replicas then pull from it when
// they form a batch.
class Engine {
 public:
  using Progress = EngineProgress;

  explicit Engine(EngineParts parts);
  const LinkNetwork* network() const { return network_.get(); }

  EngineTotals run();

 private:
  enum EventKind : std::int32_t {
    kArrival = 0,
    kStepEnd = 1,
    kTransfer = 2,
    kStageFree = 3,
    kAutoscale = 4,
    kProvisioned = 5
  };
  struct Transfer {
    Request* request = nullptr;
    ReplicaId from = kNoReplica;
    ReplicaId to = kNoReplica;
    std::int64_t blocks = 0;  // allocated for it on the decode replica
    SimTime queued = 0;
    SimTime start = 0;
    double bytes = 0;
  };

  void on_arrivals(SimTime now);
  // Closed-loop workloads: after completions at `now`, hands the held next arrival back and pulls
  // again (a follow-up may come first), scheduling an arrival event for it when needed.
  void refill_arrival(SimTime now);
  // Routes a new request; returns the replica it went to, kQueued (the router holds it) or
  // kRefused.
  ReplicaId admit(const RequestSpec& spec, SimTime now);
  void index_routable();
  // Whether `replica` can ever hold a request of `spec` (its length and peak KV).
  static bool can_ever_hold(const Replica& replica, const RequestSpec& spec);
  void try_start(Replica& replica, SimTime now);
  // The step starting on `replica` now draws `watts` above its idle power (0: it goes idle).
  void set_step_power(Replica& replica, double watts, SimTime now);
  void on_step_end(Replica& replica, SimTime now);
  template <bool kSpeculative, bool kHandOff>
  void account_step(const Batch& batch, SimTime now);
  // Disaggregation: sends the head of the hand-off queue while a decode replica has room.
  void drain_handoffs(SimTime now);
  // Autoscaling: one evaluation, and a provisioning replica's delay ending.
  void on_autoscale(SimTime now);
  void on_provisioned(ReplicaId id, SimTime now);
  void on_transfers(SimTime now);
  void schedule_network_event();
  double kv_bytes(const Request& r, const ReplicaSpec& spec) const;
  Request* allocate();
  void release(Request* r);
  void set_disaggregation(Router& decode_router, const ClusterSpec& cluster);
  void set_autoscaler(Autoscaler* autoscaler);

  Fleet& fleet_;
  Router& router_;
  Workload& workload_;
  ClosedLoopWorkload* loop_ = nullptr;  // workload_'s closed-loop role, or nullptr
  const CostModel& cost_model_;
  std::vector<RunObserver*> observers_;
  Progress progress_;
  const std::atomic<bool>* stop_ = nullptr;
  const SloPolicy* slo_ = nullptr;
  SimTime slo_overhead_ns_ = 0;
  std::uint64_t slo_seed_ = 0;

  EventQueue queue_;
  std::optional<RequestSpec> pending_;  // next arrival, already pulled from the workload
  std::deque<Request> pool_;            // stable addresses
  std::vector<Request*> free_;
  std::vector<ReplicaId> eligible_;
  // Replicas a new request may go to (every one but decode replicas), and the largest request
  // all of them can hold: a request within it is eligible everywhere without a scan.
  std::vector<ReplicaId> routable_;
  std::int64_t routable_max_len_ = 0;
  std::int64_t routable_max_kv_tokens_ = 0;
  std::vector<ReplicaId> touched_;  // replicas that got requests at this arrival instant
  bool any_queued_ = false;         // … and whether the router held one for any replica to pull
  std::vector<Request*> finished_;
  std::vector<TokenEvent> tokens_;  // of the step ending (scratch, sized to the largest batch)
  std::size_t num_tokens_ = 0;      // … of which the step ending filled these
  BatchShape shape_;
  const Speculation* speculation_ = nullptr;
  std::vector<DraftSlot> drafts_;  // the speculating requests of the step being priced (scratch)
  std::vector<PrefillChunk> draft_prefills_;  // its real prefill chunks, with speculation (scratch)
  EngineTotals totals_;
  RequestId next_id_ = 0;
  SimTime last_arrival_ = 0;
  // Board power of the fleet now (idle power + steps in flight above it) and the instant it was
  // last changed at; the peak is taken when time moves on, so steps that end and start at one
  // instant never count twice.
  double fleet_power_w_ = 0;
  SimTime power_changed_at_ = -1;

  Autoscaler* autoscaler_ = nullptr;  // null for a static fleet
  std::vector<ReplicaId> started_;    // replicas that began provisioning (scratch)

  // Disaggregation (EngineParts::decode_router); unused otherwise.
  Router* decode_router_ = nullptr;
  std::unique_ptr<LinkNetwork> network_;
  std::deque<Request*> handoffs_;    // waiting for a decode replica with room
  std::vector<Transfer> transfers_;  // slots; a transfer's id is its slot
  std::vector<std::int64_t> free_slots_;
  std::vector<std::int64_t> transfers_done_;
  std::vector<std::int32_t> incoming_;  // per replica: transfers in flight to it
  // Per replica, the optional scheduler interface of its role (nullptr for the other role).
  std::vector<PrefillRole*> prefill_roles_;
  std::vector<DecodeRole*> decode_roles_;
  std::int64_t network_version_ = 0;  // a kTransfer event of an older version is stale
};

}  // namespace servesim
