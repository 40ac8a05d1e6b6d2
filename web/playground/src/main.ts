// The playground page: a USSD phone, an oracle chat client and a live dashboard, each in its own section.
import { setupChat } from './chat.js';
import { setupDashboard } from './dashboard.js';
import { setupUssdPhone } from './ussd.js';

setupUssdPhone();
setupChat();
setupDashboard();
