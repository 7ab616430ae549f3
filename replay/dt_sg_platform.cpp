/* The only C++ file of dtsim: turns a dt_topology into a SimGrid 3.32 platform (DESIGN.md §2-§3).
 * One netzone of our own holds every host and split-duplex link; its route lookup asks dt_topology for the
 * hops, so SimGrid routes are exactly dt_topology_route() with nothing stored per pair.
 * docs/simgrid-mapping.md explains the choice. */
/* The C headers have no extern "C" guards of their own: include them as C before our header. */
extern "C" {
#include "../common/dt_error.h"
#include "../common/dt_util.h"
#include "../platforms/dt_platform.h"
#include "../platforms/dt_topology.h"
}
#include "dt_sg_platform.h"

#include <simgrid/Exception.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/comm.h>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <exception>
#include <new>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>
#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_platform, dtsim, "platform: the SimGrid hosts and links built");

namespace {

namespace sgr = simgrid::kernel::routing;
using LinkImpl = simgrid::kernel::resource::StandardLinkImpl;

/* What every route reports to SimGrid as its latency: CM02 makes a flow's sharing penalty its route's latency
 * (NetworkCm02Model::communicate, src/surf/network_cm02.cpp of 3.32), so one constant for all gives every flow the
 * same penalty, plain max-min sharing. The latency-factor callback (route_latency_factor) turns it back into the
 * route's real latency, the sum of its links' latencies, for the time the flow waits before it takes bandwidth. */
constexpr double kSharingPenalty = 1.0; /* seconds, as SimGrid reads it; only its being equal for all matters */

/* A zone whose vertices are the GPUs (vertex id == global GPU index, hosts are added in order) and whose
 * routes are computed on demand. The hops are pushed as the _UP or _DOWN member of each split-duplex link;
 * the latency reported is kSharingPenalty, whatever the route (the real one comes from route_latency_factor). */
class DtZone final : public sgr::NetZoneImpl {
public:
  DtZone(const std::string& name, const dt_topology* topo) : NetZoneImpl(name), topo_(topo) {}

  void set_links(std::vector<LinkImpl*> up, std::vector<LinkImpl*> down)
  {
    up_   = std::move(up);
    down_ = std::move(down);
  }

  void get_local_route(const sgr::NetPoint* src, const sgr::NetPoint* dst, sgr::Route* into,
                       double* latency) override
  {
    dt_hop hops[DT_ROUTE_MAX_HOPS];
    int n = dt_topology_route(topo_, static_cast<int>(src->id()), static_cast<int>(dst->id()), hops, nullptr,
                              nullptr);
    if (n < 0)
      throw std::out_of_range("dtsim zone: no route from '" + src->get_name() + "' to '" + dst->get_name() + "'");
    for (int i = 0; i < n; i++)
      into->link_list_.push_back(hops[i].dir == 0 ? up_[hops[i].link] : down_[hops[i].link]);
    if (latency)
      *latency += kSharingPenalty;
  }

private:
  const dt_topology* topo_;
  std::vector<LinkImpl*> up_;   /* [link index] the _UP member */
  std::vector<LinkImpl*> down_; /* [link index] the _DOWN member */
};

/* The latency-factor callback (NetworkModelIntf::NetworkFactorCb): the route's latency in seconds, the sum of its
 * links' latencies in route order, over the kSharingPenalty the route reported, so that SimGrid's latency (reported
 * x factor) is the route's own. */
double route_latency_factor(double /*size*/, const simgrid::s4u::Host* /*src*/, const simgrid::s4u::Host* /*dst*/,
                            const std::vector<simgrid::s4u::Link*>& links,
                            const std::unordered_set<simgrid::s4u::NetZone*>& /*netzones*/)
{
  double latency = 0;
  for (auto const* l : links)
    latency += l->get_latency();
  return latency / kSharingPenalty;
}

int build(const dt_topology* t, dt_error* err)
{
  namespace s4u = simgrid::s4u;
  const dt_platform* p = dt_topology_platform(t);

  if (s4u::Engine::get_instance()->get_netzone_root() != nullptr)
    return dt_error_set(err, "", 0, 0, "the simgrid platform is already built (one platform per process)");
  double speed = p->gpu_peak * p->gpu_efficiency;
  if (!(speed > 0))
    return dt_error_set(err, "", 0, 0, "gpu speed (peak x efficiency) must be positive, found %g", speed);

  /* CM02 without cross-traffic or TCP window: a flow costs exactly sum(latency) + size / min(bandwidth),
   * and a link's bandwidth is shared max-min among its flows, equally (below; DESIGN.md §3). Must precede the
   * first zone. */
  s4u::Engine::set_config("network/model:CM02");
  s4u::Engine::set_config("network/crosstraffic:0");
  s4u::Engine::set_config("network/TCP-gamma:0");

  /* The first zone created becomes the root and instantiates the models configured above. */
  auto* zone = new DtZone("dtsim", t);
  s4u::NetZone* iface = zone->get_iface();

  /* Plain max-min sharing: CM02 weighs each flow's share by 1 / its route latency, TCP's round-trip unfairness.
   * The fabrics dtsim models share a link equally among the flows on it: InfiniBand's credit-based flow control
   * and NVLink/NVSwitch round-robin arbitration serve the flows in turn, whatever their path length. Every route
   * reports kSharingPenalty (DtZone), so every flow has the same penalty; SimGrid then multiplies that latency by
   * this factor (comm_action_set_bounds), which makes it the sum of the route's link latencies, summed in route
   * order from 0 as SimGrid's own zones do: bit for bit the latency the route had before. */
  iface->get_network_model()->set_lat_factor_cb(route_latency_factor);

  int gpus = dt_platform_gpu_count(p);
  for (int i = 0; i < gpus; i++) {
    s4u::Host* host = iface->create_host("gpu" + std::to_string(i), speed);
    if (host->get_netpoint()->id() != static_cast<unsigned long>(i))
      return dt_error_set(err, "", 0, 0, "simgrid host 'gpu%d' got vertex %lu", i, host->get_netpoint()->id());
  }

  size_t count = dt_topology_link_count(t);
  std::vector<LinkImpl*> up(count);
  std::vector<LinkImpl*> down(count);
  char name[128];
  for (size_t i = 0; i < count; i++) {
    const dt_link* l = dt_topology_link(t, i);
    s4u::SplitDuplexLink* link = iface->create_split_duplex_link(dt_topology_link_name(t, i, name, sizeof name),
                                                                 l->bandwidth);
    link->set_latency(l->latency);
    up[i]   = link->get_link_up()->get_impl();
    down[i] = link->get_link_down()->get_impl();
  }
  zone->set_links(std::move(up), std::move(down));
  iface->seal();
  XBT_VERB("built %d hosts (one per GPU) and %zu split-duplex links", gpus, count);
  return DT_OK;
}

} // namespace

extern "C" int dt_sg_platform_build(const dt_topology* t, dt_error* err)
{
  /* SimGrid's own allocations (operator new, here and during the run) end as dtsim's do: exit 2 naming the
   * phase (dt_oom), not std::bad_alloc and an abort */
  std::set_new_handler([] { dt_oom(0); });
  try {
    return build(t, err);
  } catch (const std::exception& e) {
    return dt_error_set(err, "", 0, 0, "simgrid rejected the platform: %s", e.what());
  }
}

int dt_sg_init(int* argc, char** argv, dt_error* err)
{
  try {
    simgrid::s4u::Engine::get_instance(argc, argv);
  } catch (const std::exception& e) {
    /* SimGrid's message lists every key; keep its first line */
    std::string what = e.what();
    return dt_error_set(err, nullptr, 0, 0, "SimGrid rejected a setting: %s", what.substr(0, what.find('\n')).c_str());
  }
  return DT_OK;
}

namespace {
using simgrid::s4u::CommPtr;

/* The references a wait holds: it takes over the caller's (one per comm, as sg_mailbox_put_async and
 * sg_mailbox_get_async return them) into RAII pointers, so that an actor killed inside the wait drops them. Up to
 * N live on the stack, more on the heap: the common waits (a collective's few comms, a batch's queues) allocate
 * nothing, as the stack arrays of 16 and 64 did before the kill handling. */
template <size_t N> class held_comms {
public:
  held_comms(sg_comm_t* comms, size_t n) : n_(n)
  {
    if (n > N) {
      big_.reserve(n);
      for (size_t i = 0; i < n; i++)
        big_.emplace_back(comms[i], false);
      p_ = big_.data();
    } else {
      for (size_t i = 0; i < n; i++)
        small_[i] = CommPtr(comms[i], false);
      p_ = small_;
    }
  }
  held_comms(const held_comms&)            = delete;
  held_comms& operator=(const held_comms&) = delete;
  CommPtr& operator[](size_t i) { return p_[i]; }
  CommPtr* begin() { return p_; }
  CommPtr* end() { return p_ + n_; }

private:
  size_t n_;
  CommPtr small_[N];
  std::vector<CommPtr> big_;
  CommPtr* p_;
};

/* The actor is being killed (a run that a link failure aborted, or a deadlock's end: ForcefulKillException unwinds
 * its stack). SimGrid's kernel has cancelled the actor's comms already (ActorImpl::exit cancels every activity of
 * the actor); their s4u side still says STARTED, and Comm::~Comm prints a "freed before its completion" backtrace
 * for such a comm. A dying actor can make no simcall, so Comm::cancel (one) is out: only the s4u state is set,
 * then the references go with the unwinding. SimGrid's Exception.hpp allows this: catch, clean up, rethrow. */
template <typename Range> void cancelled_by_kill(Range& comms)
{
  for (auto& c : comms)
    if (c && c->get_state() == simgrid::s4u::Activity::State::STARTED)
      c->set_state(simgrid::s4u::Activity::State::CANCELED);
}

/* Comm::wait_any takes only a std::vector: spare ones, each given back with its capacity after its wait, so that
 * the waits allocate nothing of their own once there are as many as actors waiting at once (SimGrid runs one actor
 * at a time, contexts/nthreads is not accepted by --cfg, and an actor switches only inside the wait; SimGrid's
 * wait_any itself still copies the list). */
std::vector<std::vector<CommPtr>> spare_lists;

class borrowed_list {
public:
  borrowed_list()
  {
    if (not spare_lists.empty()) {
      list_ = std::move(spare_lists.back());
      spare_lists.pop_back();
    }
  }
  ~borrowed_list()
  {
    list_.clear(); /* drops the references left (a kill's unwinding), keeps the capacity */
    spare_lists.push_back(std::move(list_));
  }
  borrowed_list(const borrowed_list&)            = delete;
  borrowed_list& operator=(const borrowed_list&) = delete;
  std::vector<CommPtr> list_;
};
} // namespace

void dt_sg_comm_wait_all_times(sg_comm_t* comms, size_t n, double* start, double* finish)
{
  held_comms<16> held(comms, n);
  try {
    for (auto& c : held) /* what Comm::wait_all does (SimGrid 3.32), without its std::vector */
      c->wait();
  } catch (simgrid::ForcefulKillException const&) {
    cancelled_by_kill(held);
    throw;
  }
  for (size_t i = 0; i < n; i++) {
    start[i]  = held[i]->get_start_time();
    finish[i] = held[i]->get_finish_time();
  }
}

size_t dt_sg_comm_wait_any_times(sg_comm_t* comms, size_t n, sg_comm_t* also, size_t nalso, double* start,
                                 double* finish)
{
  borrowed_list b;
  std::vector<CommPtr>& held = b.list_;
  held.reserve(n);
  for (size_t i = 0; i < n; i++)
    held.emplace_back(comms[i], false);
  ssize_t pos;
  try {
    pos = simgrid::s4u::Comm::wait_any(held);
  } catch (simgrid::ForcefulKillException const&) {
    cancelled_by_kill(held);
    held_comms<64> rest(also, nalso);
    cancelled_by_kill(rest);
    throw;
  }
  size_t x = pos < 0 ? 0 : static_cast<size_t>(pos);
  *start  = held[x]->get_start_time();
  *finish = held[x]->get_finish_time();
  for (size_t i = 0; i < n; i++) /* the caller keeps its references to the others */
    if (i != x)
      held[i].detach();
  return x;
}

int dt_sg_link_in_use(sg_link_t link)
{
  return link != nullptr && link->is_used();
}

namespace {
long watch_sleepers;         /* actors other than the ignored ones in a sleep (a compute, a delay, a closed form) */
unsigned long watch_epoch;   /* bumped whenever one of them starts a sleep, and whenever any comm is posted */
bool watch_on;
std::vector<const simgrid::s4u::Actor*> watch_ignored; /* the daemons that keep the clock moving */

bool watched(simgrid::s4u::Actor const& a)
{
  for (auto const* x : watch_ignored)
    if (x == &a)
      return false;
  return true;
}
} // namespace

void dt_sg_activity_ignore(sg_actor_t actor)
{
  watch_ignored.push_back(actor);
}

void dt_sg_activity_watch(void)
{
  if (watch_on)
    return;
  watch_on = true;
  simgrid::s4u::Actor::on_sleep_cb([](simgrid::s4u::Actor const& a) {
    if (watched(a)) {
      watch_sleepers++;
      watch_epoch++;
    }
  });
  simgrid::s4u::Actor::on_wake_up_cb([](simgrid::s4u::Actor const& a) {
    if (watched(a))
      watch_sleepers--;
  });
  simgrid::s4u::Comm::on_send_cb([](simgrid::s4u::Comm const&) { watch_epoch++; });
  simgrid::s4u::Comm::on_recv_cb([](simgrid::s4u::Comm const&) { watch_epoch++; });
}

int dt_sg_activity_quiet(unsigned long *epoch)
{
  *epoch = watch_epoch;
  if (watch_sleepers > 0)
    return 0;
  for (auto const* l : simgrid::s4u::Engine::get_instance()->get_all_links())
    if (l->is_used())
      return 0;
  return 1;
}
