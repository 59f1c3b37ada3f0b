//! Layer 2–3, the model: events and their envelope, plans and their validation, the pure fold into RunState, the quality gate and status rules.

pub mod crash;
pub mod event;
pub mod gate;
pub mod plan;
pub mod state;
