/* What SimGrid knows of a flow in flight (dt_sg_flight.h): its start and the bytes it has left, read from s4u's
 * Comm without a simcall (Activity::get_start_time and get_finish_time are -1 until then; get_remaining brings the network
 * action's remains up to the current time). */
#include "dt_sg_flight.h"

#include <simgrid/s4u/Comm.hpp>

int dt_sg_comm_progress(sg_comm_t comm, double* start_s, double* finish_s, double* remaining)
{
  if (comm == nullptr)
    return 0;
  double s = comm->get_start_time();
  if (!(s >= 0))
    return 0;
  *start_s   = s;
  *finish_s  = comm->get_finish_time();
  *remaining = comm->get_remaining();
  return 1;
}
