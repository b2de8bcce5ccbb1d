"""The project's recurrent cores, one table of names: each core owns its layers, its state and its step.

Per step t, with x_t the concat of a core's inputs (the contract: `nalu_rl.agents.core.Core`):
  memory_cores   LSTMCore "lstm":          (h_t, c_t) = LSTM(x_t; h_{t-1}, c_{t-1})   "memory" = h_t
                 GRUCore "gru":            h_t = GRU(x_t; h_{t-1})                     "memory" = h_t
  counter_cores  AccumulatorCore "accumulator":  m_t = m_{t-1} + U(x_t)  (identity)    "count" = m_t
                 RecurrentUnitCore "recurrent":  m_t = U([x_t, m_{t-1}]) (learned)     "count" = m_t
                 LinearRecurrenceCore "linear-recurrence": the LRU (Orvieto et al. 2023),
                   z_t = lambda * z_{t-1} + gamma * B x_t, m_t = Re(C z_t) + D x_t    "count" = m_t
  event_counter  EventCounterCore "event-counter": m_t = m_{t-1} + U(s_t) + snap(U(e_t)), the
                   events e_t learned binary gates (learned-count's counter)   "count" = [m_t, e_t, p_t]
  change_counter ChangeCounterCore "change-counter": the event counter whose phase bits toggle where
                   the observation changes, m_t = m_{t-1} + U(s_t) + snap(U(p_t))   "count" = [m_t, p_t, p_t]
  value_count    ValueCountCore "value-count": n_t = n_{t-1} + one_hot(argmax(W_e x_t)), a count
                   per learned value, read as c_t = snap(sigmoid(W_r x_t)) . n_t   "count" = [c_t, n_t]
                 FeatureCountsCore "feature-counts": n_t = n_{t-1} + [x_t, one_hot(argmax(W_e x_t))],
                   a count per input feature and per learned value, no read       "count" = n_t
with U an arithmetic unit (NAC, NALU, NAU, NMU); no squashing on m. Where an episode starts, a core
zeroes its own state before the step. The counter cores compute in float32 even under a bfloat16
autocast, so that the count stays exact (bfloat16 holds integers exactly only up to 256).

Every core class is its own factory, called as a user's is: (inputs, input_widths, size, wiring).
"""

from nalu_rl.agents.change_counter import ChangeCounterCore, WholeStepChangeCounterCore
from nalu_rl.agents.counter_cores import AccumulatorCore, LinearRecurrenceCore, RecurrentUnitCore
from nalu_rl.agents.event_counter import EventCounterCore
from nalu_rl.agents.memory_cores import GRUCore, LSTMCore
from nalu_rl.agents.registry import register_core
from nalu_rl.agents.value_count import FeatureCountsCore, ValueCountCore

# The project's cores, registered as a user's core is: each class is its own factory.
register_core("lstm", LSTMCore)
register_core("gru", GRUCore)
register_core("accumulator", AccumulatorCore)
register_core("recurrent", RecurrentUnitCore)
register_core("linear-recurrence", LinearRecurrenceCore)
register_core("event-counter", EventCounterCore)
register_core("change-counter", ChangeCounterCore)
register_core("change-counter-whole-steps", WholeStepChangeCounterCore)
register_core("value-count", ValueCountCore)
register_core("feature-counts", FeatureCountsCore)
